/**
 * The charts of a run, in the order report.html shows them. Each is built from results.json
 * alone (so any past run can be charted again: `npm run bench:charts -- <run dir>`), and
 * gives null when the run lacks its data.
 */
import type { TopLevelSpec } from 'vega-lite';
import {
  h2loadChartSpec,
  h2loadRows,
  startupChartSpec,
  startupRows,
  startupSectionChartSpec,
  startupSectionRows,
} from './absolute-charts.js';
import { cpuChartSpec, cpuRows } from './cpu-chart.js';
import { fixedLoadChartRows, fixedLoadChartSpec } from './fixed-load-chart.js';
import type { ChartedResults } from './inputs.js';
import { latencyChartSpec, latencyRows } from './latency-chart.js';
import {
  ceilingChartSpec,
  ceilingRatioRows,
  oursGoRatioRows,
  oursRustRatioRows,
  ratioChartSpec,
  verdictRatioRows,
} from './ratio-charts.js';
import { chartContextLines } from '../run-context.js';
import { renderSvg } from './render.js';
import { scalingChartSpec, scalingRatioRows, scalingRows } from './scaling-chart.js';
import { warmupChartSpec, warmupRows } from './warmup-chart.js';

export interface ChartDefinition {
  /** File name without `.svg`. */
  readonly name: string;
  readonly caption: string;
  spec(results: ChartedResults): TopLevelSpec | null;
}

/** The chart README.md shows, regenerated from a published run by `npm run bench:charts -- DIR --headline FILE`. */
export const HEADLINE_CHART = 'ratios-ours-go';

const unlessEmpty = <T>(rows: readonly T[], spec: (rows: readonly T[]) => TopLevelSpec): TopLevelSpec | null =>
  rows.length === 0 ? null : spec(rows);

export const CHARTS: readonly ChartDefinition[] = [
  {
    name: HEADLINE_CHART,
    caption: 'ours / Go per scenario, in requests/s and in calls per server CPU-second (the inverse of CPU per call)',
    spec: (r) =>
      unlessEmpty(oursGoRatioRows(r), (rows) => ratioChartSpec(rows, 'jwt-grpc / Go: per-round ratios, median and 95 % interval')),
  },
  {
    name: 'ratios-ours-rust',
    caption: 'ours / Rust (tonic + jsonwebtoken) per scenario, in requests/s and in calls per server CPU-second',
    spec: (r) =>
      unlessEmpty(oursRustRatioRows(r), (rows) => ratioChartSpec(rows, 'jwt-grpc / Rust: per-round ratios, median and 95 % interval')),
  },
  {
    name: 'ratios',
    caption: 'every ratio between two servers a verdict reads, in the verdict’s metric',
    spec: (r) =>
      unlessEmpty(verdictRatioRows(r), (rows) => ratioChartSpec(rows, 'The verdicts’ ratios between servers: median and 95 % interval')),
  },
  {
    name: 'ratios-ceilings',
    caption: 'each server against the echo of its own gRPC stack (a ceiling, not a peer), in the verdict’s metric',
    spec: (r) => unlessEmpty(ceilingRatioRows(r), ceilingChartSpec),
  },
  { name: 'h2load', caption: 'requests/s under h2load', spec: (r) => unlessEmpty(h2loadRows(r), h2loadChartSpec) },
  {
    name: 'cpu-fixed-load',
    caption: 'CPU per call ours / Go against offered load (25/50/80 % of Go’s capacity)',
    spec: (r) => unlessEmpty(fixedLoadChartRows(r), fixedLoadChartSpec),
  },
  { name: 'latency', caption: 'latency against offered load, per server', spec: (r) => unlessEmpty(latencyRows(r), latencyChartSpec) },
  {
    name: 'scaling',
    caption: 'requests/s against N cores, and ours / Go at each N',
    spec: (r) => unlessEmpty(scalingRows(r.macro), (rows) => scalingChartSpec(rows, scalingRatioRows(r.macro))),
  },
  { name: 'cpu-per-call', caption: 'CPU per call, server and load generator', spec: (r) => unlessEmpty(cpuRows(r.macro), cpuChartSpec) },
  { name: 'warmup', caption: 'the warm-up curve', spec: (r) => unlessEmpty(warmupRows(r), warmupChartSpec) },
  { name: 'startup', caption: 'time to the first OK call', spec: (r) => unlessEmpty(startupRows(r), startupChartSpec) },
  {
    name: 'startup-section',
    caption: 'start-up beside a bare Node listener and Go (--startup)',
    spec: (r) => unlessEmpty(startupSectionRows(r), startupSectionChartSpec),
  },
];

type ChartTitle = { readonly text: string; readonly subtitle?: string | readonly string[] };

/**
 * A chart's spec with the run's context under its title: the machine, the date and the
 * load notation (run-context.ts), so that an SVG read alone still says what it measured.
 * Null where the run lacks the chart's data.
 *
 * @example
 * ```ts
 * const headline = CHARTS.find((c) => c.name === HEADLINE_CHART);
 * const spec = headline === undefined ? null : chartSpec(headline, results);
 * if (spec !== null) writeFileSync('headline.svg', await renderSvg(spec));
 * ```
 */
export function chartSpec(chart: ChartDefinition, results: ChartedResults): TopLevelSpec | null {
  const spec = chart.spec(results);
  if (spec === null) return null;
  const title = (spec as { title?: string | ChartTitle }).title;
  const base: ChartTitle = typeof title === 'string' ? { text: title } : (title ?? { text: chart.caption });
  const subtitle = base.subtitle === undefined ? [] : typeof base.subtitle === 'string' ? [base.subtitle] : [...base.subtitle];
  return { ...spec, title: { ...base, subtitle: [...subtitle, ...chartContextLines(results)] } } as TopLevelSpec;
}

export interface RenderedChart {
  readonly name: string;
  readonly caption: string;
  readonly svg: string;
}

/**
 * Renders every chart the results have data for. A chart that fails is reported through
 * `onError` and left out: the others, and the run's results, do not depend on it.
 */
export async function renderCharts(results: ChartedResults, onError: (name: string, error: Error) => void): Promise<RenderedChart[]> {
  const rendered: RenderedChart[] = [];
  for (const chart of CHARTS) {
    try {
      const spec = chartSpec(chart, results);
      if (spec !== null) rendered.push({ name: chart.name, caption: chart.caption, svg: await renderSvg(spec) });
    } catch (error) {
      onError(chart.name, error as Error);
    }
  }
  return rendered;
}
