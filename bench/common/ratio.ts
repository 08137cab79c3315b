/**
 * `numerator / denominator`, or null when either side is missing or the denominator
 * is not positive (a server that answered nothing has no meaningful ratio).
 */
export function ratio(numerator: number | null | undefined, denominator: number | null | undefined): number | null {
  if (numerator == null || denominator == null) return null;
  if (!Number.isFinite(numerator) || !Number.isFinite(denominator) || denominator <= 0) return null;
  return numerator / denominator;
}

/**
 * For each value, how many times slower it is than the best of the group (best = 1).
 * `higherIsBetter` picks whether the best is the largest (ops/s) or the smallest (latency).
 */
export function relativeToBest(values: readonly number[], higherIsBetter: boolean): number[] {
  const usable = values.filter((v) => Number.isFinite(v) && v > 0);
  if (usable.length === 0) return values.map(() => Number.NaN);
  const best = higherIsBetter ? Math.max(...usable) : Math.min(...usable);
  return values.map((v) => (Number.isFinite(v) && v > 0 ? (higherIsBetter ? best / v : v / best) : Number.NaN));
}
