/**
 * The scaling curve of the "N cores" groups (`--server-cores 1,2,4,8,15`): requests/s per
 * server against N (the cluster's workers, Go's GOMAXPROCS), median with the min-max of
 * the rounds, and ours / Go at each N with its 95 % interval. One row per algorithm and
 * load shape (1 connection, N connections, 5N connections). Drawn only when the run has
 * two N or more.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { MacroResults } from '../../macro/results.js';
import type { Scenario } from '../../macro/scenarios.js';
import { CHART_CONFIG } from './render.js';

export interface ScalingRow {
  readonly shape: string;
  readonly cores: number;
  readonly server: string;
  readonly rps: number;
  readonly low: number;
  readonly high: number;
}

export interface ScalingRatioRow {
  readonly shape: string;
  readonly cores: number;
  readonly ratio: number;
  readonly low: number;
  readonly high: number;
}

function shapeOf(scenario: Scenario): string {
  const connections =
    scenario.connections === 1 ? '1 connection' : scenario.connections === scenario.workers ? 'N connections' : '5N connections';
  return `${scenario.method === 'GenerateJwt' ? '' : `${scenario.method} `}${scenario.algorithm}, ${connections}`;
}

const multiScenarios = (macro: MacroResults): Scenario[] => macro.scenarios.filter((s) => s.group === 'multi');

export function scalingRows(macro: MacroResults | null): ScalingRow[] {
  if (macro === null) return [];
  const scenarios = multiScenarios(macro);
  if (new Set(scenarios.map((s) => s.serverCores)).size < 2) return [];
  const rows: ScalingRow[] = [];
  for (const scenario of scenarios) {
    for (const cell of macro.cells.filter((c) => c.scenario === scenario.id && c.aggregate !== null)) {
      const rps = cell.aggregate?.rpsOk;
      if (rps === undefined || !Number.isFinite(rps.median)) continue;
      const server = macro.servers.find((s) => s.name === cell.server)?.label ?? cell.server;
      rows.push({ shape: shapeOf(scenario), cores: scenario.serverCores, server, rps: rps.median, low: rps.min, high: rps.max });
    }
  }
  return rows;
}

export function scalingRatioRows(macro: MacroResults | null): ScalingRatioRow[] {
  if (macro === null) return [];
  const rows: ScalingRatioRow[] = [];
  for (const scenario of multiScenarios(macro)) {
    const ratio = macro.ratios.find((r) => r.scenario === scenario.id && r.comparison === 'ours-go' && r.metric === 'rps');
    const interval = ratio?.interval;
    if (interval === null || interval === undefined) continue;
    rows.push({
      shape: shapeOf(scenario),
      cores: scenario.serverCores,
      ratio: interval.median,
      low: interval.low ?? interval.median,
      high: interval.high ?? interval.median,
    });
  }
  return rows;
}

export function scalingChartSpec(rows: readonly ScalingRow[], ratios: readonly ScalingRatioRow[]): TopLevelSpec {
  const cores = [...new Set(rows.map((r) => r.cores))].sort((a, b) => a - b);
  const x = {
    field: 'cores',
    type: 'quantitative',
    scale: { type: 'log', base: 2, domain: [cores[0], cores[cores.length - 1]] },
    axis: { values: cores, format: 'd' },
    title: 'N: server cores (workers, GOMAXPROCS)',
  } as const;
  const color = { field: 'server', type: 'nominal', title: null } as const;
  const rps = {
    title: 'Requests/s against N (median, min-max of the rounds)',
    width: 260,
    height: 170,
    layer: [
      {
        mark: { type: 'area', opacity: 0.15 },
        encoding: { x, y: { field: 'low', type: 'quantitative', title: 'OK calls/s' }, y2: { field: 'high' }, color },
      },
      { mark: { type: 'line', point: true }, encoding: { x, y: { field: 'rps', type: 'quantitative', title: 'OK calls/s' }, color } },
    ],
  };
  const ratioY = { type: 'quantitative', scale: { type: 'log' }, title: 'ours / Go, requests/s (log)' } as const;
  const ratio = {
    title: 'ours / Go against N: median and 95 % interval',
    width: 260,
    height: 170,
    data: { values: ratios },
    layer: [
      {
        data: { values: [{ one: 1 }] },
        mark: { type: 'rule', color: '#333', strokeDash: [4, 3] },
        encoding: { y: { field: 'one', ...ratioY } },
      },
      { mark: { type: 'area', opacity: 0.2, color: '#1b7837' }, encoding: { x, y: { field: 'low', ...ratioY }, y2: { field: 'high' } } },
      { mark: { type: 'line', point: { color: '#1b7837' }, color: '#1b7837' }, encoding: { x, y: { field: 'ratio', ...ratioY } } },
    ],
  };
  // One row per load shape: the ratio panel filters the ratio rows to the same shape.
  const shapes = [...new Set(rows.map((r) => r.shape))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Scaling over N cores',
    config: CHART_CONFIG,
    vconcat: shapes.map((shape) => ({
      title: shape,
      hconcat: [
        { ...rps, data: { values: rows.filter((r) => r.shape === shape) } },
        ...(ratios.some((r) => r.shape === shape) ? [{ ...ratio, data: { values: ratios.filter((r) => r.shape === shape) } }] : []),
      ],
    })),
  } as unknown as TopLevelSpec;
}
