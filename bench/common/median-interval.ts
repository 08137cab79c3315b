/**
 * Confidence intervals of a median by the percentile bootstrap, with a seeded PRNG so
 * that a run's intervals can be recomputed exactly from its results.json (and tested).
 *
 * Method (Efron and Tibshirani, "An Introduction to the Bootstrap", ch. 13): draw
 * `resamples` samples of n values with replacement from the n observed values, take
 * each sample's median, and report the 2.5th and 97.5th percentiles of those medians
 * as the 95 % interval. No distribution is assumed, which suits per-round ratios of a
 * noisy VM (skewed, with the odd outlier).
 */
import { median } from './stats.js';

/** Resamples per interval: the percentiles of 10,000 medians move by well under 1 % between seeds. */
export const BOOTSTRAP_RESAMPLES = 10_000;
export const CONFIDENCE = 0.95;
/**
 * Fewest values an interval is computed from. With n values the percentile interval of
 * the median is close to the range of the values, which covers the true median with
 * probability 1 - 2 x 0.5^n: 94 % for n = 5, 75 % for n = 3. Below 5 an interval would
 * promise more than it holds, so none is given.
 */
export const MIN_VALUES_FOR_INTERVAL = 5;
/** The seed of every interval of a run (each interval also mixes in its own key: see {@link seedFor}). */
export const DEFAULT_SEED = 0x5eed_2026;

/** A median with its interval; `low`/`high` are null when there were too few values. */
export interface MedianInterval {
  readonly median: number;
  readonly low: number | null;
  readonly high: number | null;
  readonly n: number;
}

/**
 * mulberry32: a 32-bit PRNG (Tommy Ettinger's public-domain generator), uniform in
 * [0, 1). Statistically fine for resampling indices, tiny, and the same on every
 * platform, unlike Math.random, which cannot be seeded.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seed for one interval: FNV-1a of its key (e.g. `single-hs256-1x50/ours-go/rps`)
 * mixed with the run's seed, so that intervals do not share one stream of draws and each
 * can be recomputed alone.
 */
export function seedFor(key: string, seed: number = DEFAULT_SEED): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash ^ seed) >>> 0;
}

/** The q-quantile of sorted values, interpolating linearly between order statistics (R's type 7). */
export function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError('quantile of an empty list');
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  const lower = sorted[below] as number;
  return lower + ((sorted[above] as number) - lower) * (position - below);
}

/**
 * The median of `values` and its percentile-bootstrap interval at `confidence`.
 * Deterministic for a given seed. Non-finite values are refused: a missing round is
 * left out by the caller, not passed as NaN.
 */
export function bootstrapMedian(
  values: readonly number[],
  seed: number,
  resamples: number = BOOTSTRAP_RESAMPLES,
  confidence: number = CONFIDENCE,
): MedianInterval {
  if (values.length === 0) throw new RangeError('bootstrap of an empty list');
  if (values.some((v) => !Number.isFinite(v))) throw new RangeError('bootstrap of a non-finite value');
  const n = values.length;
  if (n < MIN_VALUES_FOR_INTERVAL) return { median: median(values), low: null, high: null, n };
  const random = mulberry32(seed);
  const medians = new Float64Array(resamples);
  const sample = new Float64Array(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = values[Math.floor(random() * n)] as number;
    sample.sort();
    const mid = n >> 1;
    medians[r] = n % 2 === 1 ? (sample[mid] as number) : ((sample[mid - 1] as number) + (sample[mid] as number)) / 2;
  }
  medians.sort();
  const sorted = Array.from(medians);
  const tail = (1 - confidence) / 2;
  return { median: median(values), low: quantileOfSorted(sorted, tail), high: quantileOfSorted(sorted, 1 - tail), n };
}

/**
 * Whether an interval of a ratio includes 1.00: the data do not show which side is
 * larger, and the report says "no difference shown" rather than a ratio. An interval
 * that could not be computed says nothing either way, so it counts as spanning 1.
 */
export function spansOne(interval: MedianInterval): boolean {
  return interval.low === null || interval.high === null || (interval.low <= 1 && interval.high >= 1);
}
