/**
 * Absolute figures with their intervals, where a section has them: requests/s per server
 * under h2load (saturated or not), and time from start to the first OK call.
 */
import type { TopLevelSpec } from 'vega-lite';
import { type DotRow, dotChartSpec } from './interval-dots.js';
import { type ChartedResults, entriesOf, intervalOf } from './inputs.js';

export function h2loadRows(results: ChartedResults): DotRow[] {
  const rows: DotRow[] = [];
  for (const entry of entriesOf(results.h2load)) {
    const rps = intervalOf(entry['rps']);
    if (rps === null) continue;
    rows.push({ row: `${String(entry['algorithm'])} · ${String(entry['server'])}`, ...rps, reading: entry['saturated'] === true ? 'server saturated' : 'not saturated' });
  }
  return rows;
}

export function h2loadChartSpec(rows: readonly DotRow[]): TopLevelSpec {
  return dotChartSpec(rows, {
    title: 'Requests/s under h2load: median and 95 % interval',
    xTitle: 'OK calls per second',
    ratio: false,
    colours: { 'server saturated': '#2166ac', 'not saturated': '#b8b8b8' },
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

export function startupChartSpec(rows: readonly DotRow[]): TopLevelSpec {
  return dotChartSpec(rows, {
    title: 'Start-up: process start to first OK call, median and 95 % interval',
    xTitle: 'ms',
    ratio: false,
    colours: { 'time to first OK call': '#2166ac' },
    labelFormat: '{} ms',
  });
}

