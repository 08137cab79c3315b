import { describe, expect, it } from 'vitest';
import {
  MIN_VALUES_FOR_INTERVAL,
  bootstrapMedian,
  mulberry32,
  quantileOfSorted,
  seedFor,
  spansOne,
} from '../../bench/common/median-interval.js';
import { formatRatioInterval } from '../../bench/common/format.js';
import { median } from '../../bench/common/stats.js';

/** Per-round ratios of ten rounds, as a run might give them. */
const TEN = [0.61, 0.58, 0.66, 0.63, 0.6, 0.59, 0.64, 0.62, 0.57, 0.65];

/**
 * The exact bootstrap distribution of the median of a resample of `values` (n <= 10):
 * every multiset of n draws, weighted by its multinomial probability.
 */
function exactBootstrapCdf(values: readonly number[]): { value: number; cdf: number }[] {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  const factorial = (k: number): number => (k <= 1 ? 1 : k * factorial(k - 1));
  const weights = new Map<number, number>();
  const counts = new Array<number>(n).fill(0);
  const visit = (index: number, left: number): void => {
    if (index === n - 1) {
      counts[index] = left;
      const resample = counts.flatMap((c, i) => new Array<number>(c).fill(sorted[i] as number));
      const probability = counts.reduce((p, c) => p / factorial(c), factorial(n)) / n ** n;
      const m = median(resample);
      weights.set(m, (weights.get(m) ?? 0) + probability);
      return;
    }
    for (let c = 0; c <= left; c++) {
      counts[index] = c;
      visit(index + 1, left - c);
    }
  };
  visit(0, n);
  let cumulative = 0;
  return [...weights].sort(([a], [b]) => a - b).map(([value, p]) => ({ value, cdf: (cumulative += p) }));
}

describe('mulberry32', () => {
  it('is reproducible for a seed and differs between seeds', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect(c()).not.toBe(first[0]);
  });

  it('is uniform in [0, 1): mean and quartiles of 100,000 draws', () => {
    const random = mulberry32(7);
    const draws = Array.from({ length: 100_000 }, random).sort((x, y) => x - y);
    expect(draws[0]).toBeGreaterThanOrEqual(0);
    expect(draws.at(-1)).toBeLessThan(1);
    expect(draws.reduce((s, x) => s + x, 0) / draws.length).toBeCloseTo(0.5, 2);
    expect(quantileOfSorted(draws, 0.25)).toBeCloseTo(0.25, 2);
  });
});

describe('bootstrapMedian', () => {
  it('gives a known interval for a known input and seed', () => {
    const interval = bootstrapMedian(TEN, seedFor('single-hs256-1x50/ours-go/rps'));
    expect(interval.median).toBeCloseTo(0.615, 12);
    expect(interval.n).toBe(10);
    // Pinned: the same seed must always give these (a change of method shows here).
    expect(interval.low).toBeCloseTo(0.59, 12);
    expect(interval.high).toBeCloseTo(0.64, 12);
    expect(bootstrapMedian(TEN, seedFor('single-hs256-1x50/ours-go/rps'))).toEqual(interval);
  });

  it('agrees with the exact bootstrap distribution of the median', () => {
    const exact = exactBootstrapCdf(TEN);
    const quantile = (q: number): number => (exact.find((e) => e.cdf >= q) as { value: number }).value;
    const interval = bootstrapMedian(TEN, 12345);
    // 10,000 resamples: the percentiles sit within the exact 1.5 %-3.5 % and 96.5 %-98.5 % quantiles.
    expect(interval.low).toBeGreaterThanOrEqual(quantile(0.015));
    expect(interval.low).toBeLessThanOrEqual(quantile(0.035));
    expect(interval.high).toBeGreaterThanOrEqual(quantile(0.965));
    expect(interval.high).toBeLessThanOrEqual(quantile(0.985));
  });

  it('with five values, is their range (the median of 5 resampled falls on the extreme 5.8 % of the time each way)', () => {
    const interval = bootstrapMedian([1.2, 0.9, 1.1, 1.0, 1.3], 1);
    expect(interval).toEqual({ median: 1.1, low: 0.9, high: 1.3, n: 5 });
  });

  it('narrows as rounds are added from the same distribution', () => {
    const random = mulberry32(2026);
    // A noisy ratio around 0.8: uniform +-10 %, and now and then a disturbed round.
    const draw = (): number => 0.8 * (0.9 + 0.2 * random()) * (random() < 0.1 ? 1.3 : 1);
    const all = Array.from({ length: 80 }, draw);
    const width = (n: number): number => {
      const i = bootstrapMedian(all.slice(0, n), seedFor(`n${n}`));
      return (i.high as number) - (i.low as number);
    };
    expect(width(10)).toBeLessThan(width(5));
    expect(width(20)).toBeLessThan(width(10));
    expect(width(80)).toBeLessThan(width(20));
  });

  it(`gives no interval below ${MIN_VALUES_FOR_INTERVAL} values, only the median`, () => {
    expect(bootstrapMedian([0.7, 0.9], 1)).toEqual({ median: 0.8, low: null, high: null, n: 2 });
  });

  it('refuses an empty list and non-finite values', () => {
    expect(() => bootstrapMedian([], 1)).toThrow(RangeError);
    expect(() => bootstrapMedian([1, Number.NaN, 1, 1, 1], 1)).toThrow(RangeError);
  });
});

describe('the "no difference shown" rule', () => {
  const interval = (low: number, high: number) => ({ median: (low + high) / 2, low, high, n: 10 });

  it('an interval that includes 1.00 shows no difference, one on either side does', () => {
    expect(spansOne(interval(0.91, 1.05))).toBe(true);
    expect(spansOne(interval(0.9, 1))).toBe(true);
    expect(spansOne(interval(1, 1.2))).toBe(true);
    expect(spansOne(interval(0.57, 0.66))).toBe(false);
    expect(spansOne(interval(1.01, 1.2))).toBe(false);
    expect(spansOne({ median: 0.5, low: null, high: null, n: 2 })).toBe(true);
  });

  it('prints a ratio with its interval, or "no difference shown" without a point value', () => {
    expect(formatRatioInterval({ median: 0.614, low: 0.571, high: 0.659, n: 10 })).toBe('0.61x (0.57-0.66)');
    expect(formatRatioInterval(interval(0.91, 1.05))).toBe('no difference shown (0.91-1.05)');
    expect(formatRatioInterval({ median: 0.61, low: null, high: null, n: 2 })).toBe('0.61x (2 rounds: no interval)');
    expect(formatRatioInterval(null)).toBe('n/a');
  });
});
