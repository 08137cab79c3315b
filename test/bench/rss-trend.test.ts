/**
 * How a load cell tells a leak from a plateau (bench/soak/load-cell.ts): RSS that grows
 * every round is a leak; RSS that levels off, even after a late step, is not.
 */
import { describe, expect, it } from 'vitest';
import { type RssReading, GROWTH_LIMIT_MIB, leastSquaresSlope, median, rssTrend } from '../../bench/soak/load-cell.js';

const MIB = 1024 * 1024;

/** Readings after GC at these MiB, with V8's new space at `newSpace` MiB each. */
function readings(levels: readonly number[], newSpace: readonly number[] = levels.map(() => 8)): RssReading[] {
  return levels.map((level, i) => ({ raw: level * MIB, afterGc: level * MIB, newSpace: newSpace[i]! * MIB, heapUsed: 12 * MIB }));
}

const calls = (n: number): number[] => Array.from({ length: n }, () => 20_000);
const growth = (levels: readonly number[], judged = 4, newSpace?: readonly number[]): number =>
  rssTrend(readings(levels, newSpace), calls(levels.length), judged).growthPerRound / MIB;

describe('the RSS trend of a load cell', () => {
  it('calls growth in every judged round a leak: 100 bytes a call over 20,000 calls a round', () => {
    const leak = (100 * 20_000) / MIB; // 1.9 MiB a round
    const levels = [81, 117, 158, 158 + leak, 158 + 2 * leak, 158 + 3 * leak, 158 + 4 * leak];
    expect(growth(levels)).toBeCloseTo(leak, 5);
    expect(rssTrend(readings(levels), calls(7), 4).growthPerCall).toBeCloseTo(100, 0);
    expect(growth([120, 121, 122, 125, 128, 131, 134])).toBeGreaterThan(GROWTH_LIMIT_MIB);
  });

  it('passes the plateau measured outside (81 -> 117 -> 158, then 157-158 MiB)', () => {
    expect(growth([81, 117, 158, 157, 158, 157.5, 158])).toBeLessThan(GROWTH_LIMIT_MIB);
  });

  it('passes one late step of the allocator in the judged rounds, which moves a least-squares slope', () => {
    const levels = [120, 150, 155, 155, 190, 190, 190];
    expect(growth(levels)).toBe(0);
    expect(leastSquaresSlope(levels.slice(-4))).toBeGreaterThan(GROWTH_LIMIT_MIB);
  });

  it("does not count V8's new space growing as RSS growth, nor a shrunk one as a fall", () => {
    expect(growth([150, 150, 150, 166, 182, 198], 4, [1.3, 1.3, 1.3, 17.3, 33.3, 49.3])).toBe(0);
    // Its pages stay resident once it shrinks: RSS that then grows is judged whole.
    expect(growth([150, 150, 153, 156, 159, 162], 4, [64, 64, 1.3, 1.3, 1.3, 1.3])).toBe(3);
  });

  it('median and slope of small sets', () => {
    expect([median([]), median([3]), median([3, 1]), median([5, 1, 3])]).toEqual([0, 3, 2, 3]);
    expect([leastSquaresSlope([1]), leastSquaresSlope([1, 3, 5])]).toEqual([0, 2]);
  });
});
