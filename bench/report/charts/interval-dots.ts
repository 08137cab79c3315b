/**
 * The dot-and-whisker chart: one row per figure, a point at its median, a whisker over its
 * 95 % interval. Ratios use it on a log axis with the line at 1.00 the verdicts read
 * against; absolute figures (h2load requests/s, time to first call) on a linear one.
 */
import type { TopLevelSpec } from 'vega-lite';
import { CHART_CONFIG } from './render.js';

/** How a ratio's interval reads, the rule of bench/macro/verdict.ts (common/median-interval.ts, spansOne). */
export type IntervalReading = 'subject better' | 'baseline better' | 'no difference shown' | 'no interval';

export interface DotRow {
  /** The row's label, unique in the chart. */
  readonly row: string;
  readonly median: number;
  readonly low: number | null;
  readonly high: number | null;
  /** The legend entry; for ratios, how the interval reads. */
  readonly reading: string;
}

export interface DotChartOptions {
  readonly title: string;
  readonly subtitle?: string;
  readonly xTitle: string;
  /** Ratios: a log axis and the rule at 1.00; absolute figures: linear from 0. */
  readonly ratio: boolean;
  /** Colours per reading, in legend order. */
  readonly colours: Readonly<Record<string, string>>;
  readonly labelFormat: string;
}

/** Colours of the ratio readings: grey where the interval includes 1.00. */
export const READING_COLOURS: Readonly<Record<IntervalReading, string>> = {
  'subject better': '#1b7837',
  'baseline better': '#b2182b',
  'no difference shown': '#6b6b6b',
  'no interval': '#bbbbbb',
};

/** The same readings for a server against its own echo: blues and greys, since no reading there is a loss to anyone. */
export const CEILING_COLOURS: Readonly<Record<IntervalReading, string>> = {
  'subject better': '#2166ac',
  'baseline better': '#67a9cf',
  'no difference shown': '#6b6b6b',
  'no interval': '#bbbbbb',
};

/** subject better / baseline better / no difference shown: the same reading as the verdicts'. */
export function readingOf(low: number | null, high: number | null): IntervalReading {
  if (low === null || high === null) return 'no interval';
  if (low <= 1 && high >= 1) return 'no difference shown';
  return low > 1 ? 'subject better' : 'baseline better';
}

export function dotChartSpec(rows: readonly DotRow[], options: DotChartOptions): TopLevelSpec {
  // Rows without an interval get a zero-length whisker at their median, so every row draws one.
  const values = rows.map((r) => ({
    ...r,
    low: r.low ?? r.median,
    high: r.high ?? r.median,
    label: options.labelFormat.replace('{}', format(r.median)),
  }));
  const extent = values.flatMap((v) => [v.low, v.high, v.median]);
  const domain = options.ratio ? logDomain([...extent, 1]) : [0, Math.max(...extent) * 1.12];
  const readings = Object.keys(options.colours).filter((k) => values.some((v) => v.reading === k));
  const x = { scale: { type: options.ratio ? 'log' : 'linear', domain, nice: false }, title: options.xTitle } as const;
  const y = { field: 'row', type: 'nominal', sort: null, title: null } as const;
  const color = {
    field: 'reading',
    type: 'nominal',
    title: null,
    scale: { domain: readings, range: readings.map((k) => options.colours[k]) },
  } as const;
  const layers: unknown[] = [];
  if (options.ratio) {
    // The verdicts' "no difference" is an interval that includes 1.00: no margin around it, so the region is this line.
    layers.push({
      data: { values: [{ one: 1 }] },
      mark: { type: 'rule', color: '#333', strokeDash: [4, 3] },
      encoding: { x: { field: 'one', type: 'quantitative', ...x } },
    });
  }
  layers.push(
    {
      mark: { type: 'rule', strokeWidth: 2 },
      encoding: { y, x: { field: 'low', type: 'quantitative', ...x }, x2: { field: 'high' }, color },
    },
    {
      mark: { type: 'point', filled: true, size: 60, opacity: 1 },
      encoding: { y, x: { field: 'median', type: 'quantitative', ...x }, color },
    },
    {
      mark: { type: 'text', align: 'left', dx: 6, fontSize: 10 },
      encoding: { y, x: { field: 'high', type: 'quantitative', ...x }, text: { field: 'label' } },
    },
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: options.subtitle === undefined ? options.title : { text: options.title, subtitle: options.subtitle },
    config: CHART_CONFIG,
    width: 420,
    height: { step: 20 },
    data: { values },
    layer: layers,
  } as TopLevelSpec;
}

/** A log domain a little wider than the values, so that no whisker touches the frame. */
function logDomain(values: readonly number[]): [number, number] {
  const positive = values.filter((v) => v > 0);
  return [Math.min(...positive) / 1.15, Math.max(...positive) * 1.3];
}

function format(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}
