import { describe, expect, it } from 'vitest';
import { ratio, relativeToBest } from '../../bench/common/ratio.js';
import { median, spread } from '../../bench/common/stats.js';

describe('median', () => {
  it('takes the middle value of an odd count, in any order', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([10])).toBe(10);
  });
  it('averages the two middle values of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
  it('is not moved by one outlier', () => {
    expect(median([100, 101, 5])).toBe(100);
  });
  it('does not reorder its input', () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });
  it('refuses an empty list', () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

describe('spread', () => {
  it('gives median, min, max and count', () => {
    expect(spread([30_000, 28_000, 31_000])).toEqual({ median: 30_000, min: 28_000, max: 31_000, n: 3 });
  });
  it('of one repetition is that value three times', () => {
    expect(spread([7])).toEqual({ median: 7, min: 7, max: 7, n: 1 });
  });
});

describe('ratio', () => {
  it('divides', () => {
    expect(ratio(55_606, 37_426)).toBeCloseTo(1.4858, 3);
  });
  it('is null when a side is missing or the denominator is not positive', () => {
    expect(ratio(null, 1)).toBeNull();
    expect(ratio(1, undefined)).toBeNull();
    expect(ratio(1, 0)).toBeNull();
    expect(ratio(Number.NaN, 2)).toBeNull();
  });
});

describe('relativeToBest', () => {
  it('for times: smallest is 1, others are multiples of it', () => {
    expect(relativeToBest([10, 20, 5], false)).toEqual([2, 4, 1]);
  });
  it('for rates: largest is 1', () => {
    expect(relativeToBest([100, 50], true)).toEqual([1, 2]);
  });
  it('gives NaN for unusable values and ignores them when picking the best', () => {
    const result = relativeToBest([0, 4, Number.NaN], false);
    expect(result[1]).toBe(1);
    expect(Number.isNaN(result[0])).toBe(true);
    expect(Number.isNaN(result[2])).toBe(true);
  });
});
