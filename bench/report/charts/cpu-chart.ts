/**
 * CPU per call, stacked: the server's CPU and the load generator's (ghz) for each call, per
 * cell, from the round whose server figure is the median. The two together are what one
 * call costs the machine; the server's share is what the ratios compare.
 */
import type { TopLevelSpec } from 'vega-lite';
import { median } from '../../common/stats.js';
import type { MacroResults } from '../../macro/results.js';
import { CHART_CONFIG } from './render.js';

export interface CpuRow {
  readonly scenario: string;
  readonly server: string;
  readonly part: 'server' | 'load generator (ghz)';
  readonly us: number;
}

/** Medians over the rounds of each part, per cell that has rounds. */
export function cpuRows(macro: MacroResults | null): CpuRow[] {
  if (macro === null) return [];
  const rows: CpuRow[] = [];
  for (const scenario of macro.scenarios) {
    for (const cell of macro.cells.filter((c) => c.scenario === scenario.id && c.rounds.length > 0)) {
      const server = macro.servers.find((s) => s.name === cell.server)?.label ?? cell.server;
      const serverUs = cell.rounds.map((r) => r.serverCpuUsPerRequest).filter(Number.isFinite);
      const ghzUs = cell.rounds.filter((r) => r.ghz.count > 0).map((r) => (r.ghzCpuSeconds / r.ghz.count) * 1e6);
      if (serverUs.length > 0) rows.push({ scenario: scenario.label, server, part: 'server', us: median(serverUs) });
      if (ghzUs.length > 0) rows.push({ scenario: scenario.label, server, part: 'load generator (ghz)', us: median(ghzUs) });
    }
  }
  return rows;
}

export function cpuChartSpec(rows: readonly CpuRow[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'CPU per call, µs: server and load generator (median over the rounds)',
    config: CHART_CONFIG,
    data: { values: rows },
    facet: {
      row: {
        field: 'scenario',
        type: 'nominal',
        title: null,
        sort: [...new Set(rows.map((r) => r.scenario))],
        header: { labelAngle: 0, labelAlign: 'left' },
      },
    },
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: 360,
      height: { step: 16 },
      mark: { type: 'bar' },
      encoding: {
        y: { field: 'server', type: 'nominal', sort: null, title: null, axis: { labelLimit: 200 } },
        x: { field: 'us', type: 'quantitative', stack: 'zero', title: 'CPU µs per call' },
        color: {
          field: 'part',
          type: 'nominal',
          title: null,
          sort: ['server', 'load generator (ghz)'],
          scale: { range: ['#2166ac', '#b8b8b8'] },
        },
        order: { field: 'part', sort: 'descending' },
      },
    },
  } as TopLevelSpec;
}
