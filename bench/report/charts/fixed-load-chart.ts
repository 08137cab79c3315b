/**
 * CPU per call at fixed offered load: ours / Go against the offered rate (a share of Go's
 * saturated requests/s), one line per algorithm, each point its per-round median with a bar
 * over its 95 % interval, on a log axis with the line at 1.00.
 */
import type { TopLevelSpec } from 'vega-lite';
import { CHART_CONFIG } from './render.js';
import { type ChartedResults, entriesOf, intervalOf, isNumber } from './inputs.js';

export interface FixedLoadChartRow {
  readonly algorithm: string;
  /** Offered rate as a percentage of Go's saturated requests/s. */
  readonly percentOfGo: number;
  readonly offeredRps: number;
  readonly median: number;
  /** The interval's bounds; the median where the rounds were too few for one. */
  readonly low: number;
  readonly high: number;
}

/** One row per open-loop ratio that has a CPU-per-call figure; older runs give none. */
export function fixedLoadChartRows(results: ChartedResults): FixedLoadChartRow[] {
  const rows: FixedLoadChartRow[] = [];
  for (const entry of entriesOf(results.openLoopRatios)) {
    const fraction = entry['fractionOfGoCapacity'];
    const offeredRps = entry['offeredRps'];
    const ratio = intervalOf(entry['cpuPerCallRatio']);
    if (!isNumber(fraction) || !isNumber(offeredRps) || ratio === null) continue;
    rows.push({
      algorithm: String(entry['algorithm']),
      percentOfGo: Math.round(fraction * 100),
      offeredRps,
      median: ratio.median,
      low: ratio.low ?? ratio.median,
      high: ratio.high ?? ratio.median,
    });
  }
  return rows;
}

export function fixedLoadChartSpec(rows: readonly FixedLoadChartRow[]): TopLevelSpec {
  const extent = rows.flatMap((r) => [r.low, r.high, 1]).filter((v) => v > 0);
  const y = {
    type: 'quantitative',
    scale: { type: 'log', domain: [Math.min(...extent) / 1.15, Math.max(...extent) * 1.15], nice: false },
    title: 'CPU per call, ours / Go (log; < 1: ours spends less)',
  } as const;
  const x = {
    field: 'percentOfGo',
    type: 'quantitative',
    scale: { domain: [0, 100] },
    title: "offered load, % of Go's saturated requests/s",
  } as const;
  const color = { field: 'algorithm', type: 'nominal', title: null } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'Server CPU per call at fixed offered load, jwt-grpc / Go',
      subtitle: 'Per-round ratios: median and 95 % interval. Dashed line: 1.00.',
    },
    config: CHART_CONFIG,
    width: 360,
    height: 200,
    data: { values: rows },
    layer: [
      {
        data: { values: [{ one: 1 }] },
        mark: { type: 'rule', color: '#333', strokeDash: [4, 3] },
        encoding: { y: { field: 'one', ...y } },
      },
      { mark: { type: 'rule', strokeWidth: 2 }, encoding: { x, y: { field: 'low', ...y }, y2: { field: 'high' }, color } },
      { mark: { type: 'line', point: { filled: true, size: 50 } }, encoding: { x, y: { field: 'median', ...y }, color } },
    ],
  } as unknown as TopLevelSpec;
}
