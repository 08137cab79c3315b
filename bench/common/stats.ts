/** Median, min and max of the repetitions of one measurement. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/**
 * The median of a non-empty list (mean of the two middle values for an even count).
 * The median rather than the mean: one repetition disturbed by the machine (a
 * background job, a frequency change) must not move the reported figure.
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] as number) + upper) / 2;
}

/** Median with min-max, the form every repeated figure is reported in. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('spread of an empty list');
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}
