/**
 * What the charts read from a results.json: the macro section this harness always writes,
 * and the load sections (h2load, the open-loop latency sweep, the warm-up sweep, start-up;
 * their shapes are bench/load/results.ts's), each optional. A section that is absent, or whose entries
 * lack a figure a chart needs, gives no chart rather than an error: results.json files of
 * older runs stay chartable.
 */
import type { BenchResults } from '../results-file.js';

/** A median with its 95 % interval; the bounds are null when the rounds were too few. */
export interface IntervalFigure {
  readonly median: number;
  readonly low: number | null;
  readonly high: number | null;
}

/**
 * results.json as the charts read it: the load sections (bench/load/results.ts) are read
 * defensively, since files of older runs lack them or carry other shapes.
 */
export type ChartedResults = Omit<BenchResults, 'h2load' | 'openLoop' | 'openLoopRatios' | 'warmup' | 'startup' | 'startupRows'> & {
  readonly h2load?: unknown;
  readonly openLoop?: unknown;
  readonly openLoopRatios?: unknown;
  readonly warmup?: unknown;
  readonly startup?: unknown;
  readonly startupRows?: unknown;
};

/** The h2load section's entries of one key (`cells`, `ratios`), or [] when the run has none. */
export function h2loadEntries(results: ChartedResults, key: 'cells' | 'ratios'): Record<string, unknown>[] {
  const section = results.h2load as unknown;
  if (section === null || typeof section !== 'object') return [];
  return entriesOf((section as Record<string, unknown>)[key]);
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A figure with a finite median; bounds that are missing or not finite read as null. */
export function intervalOf(value: unknown): IntervalFigure | null {
  if (value === null || typeof value !== 'object') return null;
  const { median, low, high } = value as Record<string, unknown>;
  if (!isNumber(median)) return null;
  return { median, low: isNumber(low) ? low : null, high: isNumber(high) ? high : null };
}

/** The entries of an optional section that are objects, or [] when the section is absent. */
export function entriesOf(section: unknown): Record<string, unknown>[] {
  if (!Array.isArray(section)) return [];
  return section.filter((entry): entry is Record<string, unknown> => entry !== null && typeof entry === 'object');
}

export { isNumber };
