/**
 * The warm-up sweep: server CPU per call after a given number of warm-up calls (the JIT
 * and the heap settling), and ours / Go at each, with its 95 % interval, where recorded.
 */
import type { TopLevelSpec } from 'vega-lite';
import { CHART_CONFIG } from './render.js';
import { type ChartedResults, entriesOf, intervalOf, isNumber } from './inputs.js';

export interface WarmupRow {
  readonly server: string;
  readonly algorithm: string;
  readonly warmupCalls: number;
  readonly cpuPerCallUs: number;
  /** ours / Go at this warm-up; null where the entry has none. */
  readonly ratio: number | null;
  readonly ratioLow: number | null;
  readonly ratioHigh: number | null;
}

export function warmupRows(results: ChartedResults): WarmupRow[] {
  const rows: WarmupRow[] = [];
  for (const point of entriesOf(results.warmup)) {
    const warmupCalls = point['warmupCalls'];
    const cpuPerCallUs = point['cpuPerCallUs'];
    if (!isNumber(warmupCalls) || !isNumber(cpuPerCallUs)) continue;
    const ratio = intervalOf(point['ratioToGo']);
    rows.push({
      server: String(point['server']),
      algorithm: String(point['algorithm']),
      warmupCalls,
      cpuPerCallUs,
      ratio: ratio?.median ?? null,
      ratioLow: ratio === null ? null : (ratio.low ?? ratio.median),
      ratioHigh: ratio === null ? null : (ratio.high ?? ratio.median),
    });
  }
  return rows;
}

export function warmupChartSpec(rows: readonly WarmupRow[]): TopLevelSpec {
  // Ordinal: the sweep's steps spaced evenly (they span 0 to 10^5 and more, which no linear axis shows and a log one cannot place at 0).
  const x = {
    field: 'warmupCalls',
    type: 'ordinal',
    sort: 'ascending',
    title: 'warm-up calls before the measurement',
    axis: { labelAngle: 0 },
  } as const;
  const color = { field: 'server', type: 'nominal', title: null } as const;
  const cpu = {
    title: 'Server CPU per call after warm-up, µs',
    width: 300,
    height: 160,
    mark: { type: 'line', point: true },
    encoding: { x, y: { field: 'cpuPerCallUs', type: 'quantitative', title: 'CPU µs per call' }, color },
  };
  const withRatio = rows.filter((r) => r.ratio !== null);
  const ratioY = { type: 'quantitative', scale: { type: 'log' }, title: 'ours / Go (log)' } as const;
  const ratio = {
    title: 'ours / Go after warm-up: median and 95 % interval',
    width: 300,
    height: 160,
    data: { values: withRatio },
    layer: [
      {
        data: { values: [{ one: 1 }] },
        mark: { type: 'rule', color: '#333', strokeDash: [4, 3] },
        encoding: { y: { field: 'one', ...ratioY } },
      },
      { mark: { type: 'area', opacity: 0.2 }, encoding: { x, y: { field: 'ratioLow', ...ratioY }, y2: { field: 'ratioHigh' }, color } },
      { mark: { type: 'line', point: true }, encoding: { x, y: { field: 'ratio', ...ratioY }, color } },
    ],
  };
  const panels = withRatio.length > 0 ? [cpu, ratio] : [cpu];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: rows },
    facet: { row: { field: 'algorithm', type: 'nominal', title: null } },
    spec: { hconcat: panels },
  } as unknown as TopLevelSpec;
}
