/**
 * The ratio charts: every ratio the verdicts read (one row per scenario and comparison,
 * in the verdict's metric), and the headline one, ours / Go in both metrics, plus the
 * h2load cell's ours / Go where the run has it.
 */
import type { TopLevelSpec } from 'vega-lite';
import { COMPARISONS, type ComparisonKind } from '../../macro/comparisons.js';
import type { MacroResults, RatioMetric, RatioResult } from '../../macro/results.js';
import { CEILING_COLOURS, type DotRow, READING_COLOURS, dotChartSpec, readingOf } from './interval-dots.js';
import { type ChartedResults, h2loadEntries, intervalOf } from './inputs.js';

const METRIC_LABELS: Readonly<Record<RatioMetric, string>> = { rps: 'requests/s', callsPerCpuSecond: 'calls/CPU-s' };

function rowOf(macro: MacroResults, ratio: RatioResult, withComparison: boolean): DotRow | null {
  if (ratio.interval === null) return null;
  const scenario = macro.scenarios.find((s) => s.id === ratio.scenario)?.label ?? ratio.scenario;
  const comparison = COMPARISONS.find((c) => c.id === ratio.comparison)?.label ?? ratio.comparison;
  const parts = withComparison ? [scenario, comparison, METRIC_LABELS[ratio.metric]] : [scenario, METRIC_LABELS[ratio.metric]];
  const { median, low, high } = ratio.interval;
  return { row: parts.join(' · '), median, low, high, reading: readingOf(low, high) };
}

/** The h2load cells' jwt-grpc / Go rows, one per algorithm and metric, where the run has the ratio. */
export function h2loadRatioRows(results: ChartedResults): DotRow[] {
  const rows: DotRow[] = [];
  const metrics = [
    ['h2loadRequestsPerS', 'requests/s'],
    ['h2loadCallsPerCpuSecond', 'calls per CPU-second'],
  ] as const;
  for (const entry of h2loadEntries(results, 'ratios')) {
    for (const [key, label] of metrics) {
      const ratio = intervalOf(entry[key]);
      if (ratio === null) continue;
      rows.push({
        row: `h2load ${String(entry['algorithm'])} · jwt-grpc / Go · ${label}`,
        ...ratio,
        reading: readingOf(ratio.low, ratio.high),
      });
    }
  }
  return rows;
}

/** The headline ratios (the figure each verdict uses) of the comparisons of one kind. */
function headlineRows(results: ChartedResults, kind: ComparisonKind): DotRow[] {
  const macro = results.macro;
  if (macro === null) return [];
  const ofKind = new Set(COMPARISONS.filter((c) => c.kind === kind).map((c) => c.id));
  return macro.ratios
    .filter((r) => r.headline && ofKind.has(r.comparison))
    .map((r) => rowOf(macro, r, true))
    .filter((r): r is DotRow => r !== null);
}

/** Every headline ratio between two servers doing JWT work (no echo): what the verdicts compare. */
export function verdictRatioRows(results: ChartedResults): DotRow[] {
  return [...headlineRows(results, 'peer'), ...h2loadRatioRows(results)];
}

/**
 * Every headline ratio of a server against the echo of its own gRPC stack: how much of its
 * ceiling it reaches. Kept apart from the comparisons between servers, where a "Go / its
 * echo" below 1.00 would read as jwt-grpc losing.
 */
export function ceilingRatioRows(results: ChartedResults): DotRow[] {
  return headlineRows(results, 'ceiling');
}

/** ours / Go in both metrics per scenario, and under h2load: the README's chart. */
export function oursGoRatioRows(results: ChartedResults): DotRow[] {
  const macro = results.macro;
  const rows = macro === null ? [] : macro.ratios.filter((r) => r.comparison === 'ours-go').map((r) => rowOf(macro, r, false));
  return [...rows.filter((r): r is DotRow => r !== null), ...h2loadRatioRows(results)];
}

/** ours / Rust in both metrics per scenario: the same chart against the tonic + jsonwebtoken peer; none in a run without it. */
export function oursRustRatioRows(results: ChartedResults): DotRow[] {
  const macro = results.macro;
  const rows = macro === null ? [] : macro.ratios.filter((r) => r.comparison === 'ours-rust').map((r) => rowOf(macro, r, false));
  return rows.filter((r): r is DotRow => r !== null);
}

export function ratioChartSpec(rows: readonly DotRow[], title: string): TopLevelSpec {
  return dotChartSpec(rows, {
    title,
    subtitle: 'Dashed line: 1.00. A whisker across it reads "no difference shown", the verdicts\' rule (no margin around 1.00).',
    xTitle: 'per-round ratio: median and 95 % interval (log; > 1: the first server is better)',
    ratio: true,
    colours: READING_COLOURS,
    labelFormat: '{}x',
  });
}

/** The ceiling chart: each server against its own stack's echo, in colours that claim no winner. */
export function ceilingChartSpec(rows: readonly DotRow[]): TopLevelSpec {
  return dotChartSpec(rows, {
    title: 'Each server against the echo of its own gRPC stack (its ceiling): median and 95 % interval',
    subtitle:
      'Not a comparison between servers: an echo answers constants and does no JWT work, so below 1.00 is the share of the ceiling a server reaches.',
    xTitle: 'per-round ratio server / its echo: median and 95 % interval (log)',
    ratio: true,
    colours: CEILING_COLOURS,
    labelFormat: '{}x',
  });
}
