/**
 * Latency against offered load (the open-loop sweep): p50, p99 and p99.9 per server as
 * lines over the offered rate, each with its 95 % interval as a band.
 */
import type { TopLevelSpec } from 'vega-lite';
import { CHART_CONFIG } from './render.js';
import { type ChartedResults, entriesOf, intervalOf, isNumber } from './inputs.js';

export interface LatencyRow {
  readonly server: string;
  readonly algorithm: string;
  readonly offeredRps: number;
  readonly percentile: 'p50' | 'p99' | 'p99.9';
  readonly median: number;
  readonly low: number;
  readonly high: number;
}

const PERCENTILES = [
  ['p50', 'p50Ms'],
  ['p99', 'p99Ms'],
  ['p99.9', 'p999Ms'],
] as const;

/** One row per point and percentile; points without an offered rate or a latency are left out. */
export function latencyRows(results: ChartedResults): LatencyRow[] {
  const rows: LatencyRow[] = [];
  for (const point of entriesOf(results.openLoop)) {
    const offeredRps = point['offeredRps'];
    if (!isNumber(offeredRps)) continue;
    for (const [percentile, key] of PERCENTILES) {
      const figure = intervalOf(point[key]);
      if (figure === null) continue;
      const { median } = figure;
      rows.push({
        server: String(point['server']),
        algorithm: String(point['algorithm']),
        offeredRps,
        percentile,
        median,
        low: figure.low ?? median,
        high: figure.high ?? median,
      });
    }
  }
  return rows;
}

export function latencyChartSpec(rows: readonly LatencyRow[]): TopLevelSpec {
  const x = { field: 'offeredRps', type: 'quantitative', title: 'offered load, calls/s' } as const;
  const y = { type: 'quantitative', scale: { type: 'log' }, title: 'latency, ms (log)' } as const;
  const color = { field: 'percentile', type: 'nominal', title: 'percentile', sort: ['p50', 'p99', 'p99.9'] } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Latency against offered load (open loop): median and 95 % interval per point',
    config: CHART_CONFIG,
    data: { values: rows },
    facet: { row: { field: 'algorithm', type: 'nominal', title: null }, column: { field: 'server', type: 'nominal', title: null } },
    spec: {
      width: 220,
      height: 160,
      layer: [
        { mark: { type: 'area', opacity: 0.2 }, encoding: { x, y: { field: 'low', ...y }, y2: { field: 'high' }, color } },
        { mark: { type: 'line', point: true }, encoding: { x, y: { field: 'median', ...y }, color } },
      ],
    },
  } as TopLevelSpec;
}
