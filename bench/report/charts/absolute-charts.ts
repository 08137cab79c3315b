/**
 * Absolute figures with their intervals, where a section has them: requests/s per server
 * under h2load (saturated or not), and time from start to the first OK call.
 */
import type { TopLevelSpec } from 'vega-lite';
import { type DotRow, dotChartSpec } from './interval-dots.js';
import { type ChartedResults, entriesOf, h2loadEntries, intervalOf } from './inputs.js';

export function h2loadRows(results: ChartedResults): DotRow[] {
  const rows: DotRow[] = [];
  for (const cell of h2loadEntries(results, 'cells')) {
    const figures = cell['h2load'] as Record<string, unknown> | null | undefined;
    const rps = intervalOf(figures?.['requestsPerS']);
    if (rps === null) continue;
    const saturated = figures?.['saturated'];
    rows.push({
      row: `${String(cell['algorithm'])} · ${String(cell['server'])}`,
      ...rps,
      reading: saturated === 'server' ? 'server saturated' : saturated === 'generator' ? 'h2load saturated' : 'neither saturated',
    });
  }
  return rows;
}

export function h2loadChartSpec(rows: readonly DotRow[]): TopLevelSpec {
  return dotChartSpec(rows, {
    title: 'Requests/s under h2load: median and 95 % interval',
    xTitle: 'OK calls per second',
    ratio: false,
    colours: { 'server saturated': '#2166ac', 'h2load saturated': '#d6604d', 'neither saturated': '#b8b8b8' },
    labelFormat: '{}',
  });
}

export function startupRows(results: ChartedResults): DotRow[] {
  const rows: DotRow[] = [];
  for (const entry of entriesOf(results.startup)) {
    const ms = intervalOf(entry['timeToFirstOkMs']);
    if (ms !== null) rows.push({ row: String(entry['server']), ...ms, reading: 'time to first OK call' });
  }
  return rows;
}

/** The start-up section's rows (bench/load/startup.ts): ms each, coloured by what kind of start it is. */
export function startupSectionRows(results: ChartedResults): DotRow[] {
  const rows: DotRow[] = [];
  for (const entry of entriesOf(results.startupRows)) {
    const ms = intervalOf(entry['ms']);
    const id = String(entry['id']);
    if (ms === null) continue;
    const reading = id.startsWith('bare') || id === 'go' ? 'reference (bare Node, Go)' : 'jwt-grpc';
    rows.push({ row: String(entry['what']), ...ms, reading });
  }
  return rows;
}

export function startupSectionChartSpec(rows: readonly DotRow[]): TopLevelSpec {
  return dotChartSpec(rows, {
    title: 'Start-up on one pinned core: median and 95 % interval',
    xTitle: 'ms',
    ratio: false,
    colours: { 'jwt-grpc': '#2166ac', 'reference (bare Node, Go)': '#b8b8b8' },
    labelFormat: '{} ms',
  });
}

export function startupChartSpec(rows: readonly DotRow[]): TopLevelSpec {
  return dotChartSpec(rows, {
    title: 'Start-up: process start to first OK call, median and 95 % interval',
    xTitle: 'ms',
    ratio: false,
    colours: { 'time to first OK call': '#2166ac' },
    labelFormat: '{} ms',
  });
}
