/** Number formatting shared by the progress line and the tables. */
import { type MedianInterval, spansOne } from './median-interval.js';

export function formatInteger(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Two decimals for ratios, e.g. `1.48x`. */
export function formatRatio(value: number | null): string {
  return value === null || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(2)}x`;
}

/** Milliseconds with a precision that suits the magnitude. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  return ms.toFixed(2);
}

/** Microseconds, for per-operation times. */
export function formatUs(us: number): string {
  if (!Number.isFinite(us)) return 'n/a';
  if (us >= 100) return us.toFixed(0);
  if (us >= 10) return us.toFixed(1);
  return us.toFixed(2);
}

/** Mebibytes, whole by default (the tables), e.g. `102`; the caller adds the unit where the text needs it. */
export function formatMiB(bytes: number, decimals = 0): string {
  return Number.isFinite(bytes) ? (bytes / 1024 / 1024).toFixed(decimals) : 'n/a';
}

/** `mm:ss` (or `h:mm:ss` past an hour) for the progress line. */
export function formatClock(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  const mmss = `${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}`;
  return hours > 0 ? `${hours}:${mmss}` : mmss;
}

/**
 * A ratio with its interval: `0.61x (0.57-0.66)`; an interval that includes 1.00 as
 * `no difference shown (0.91-1.05)`, without a point value that would invite reading a
 * winner into it; too few values for an interval as `0.61x (2 rounds: no interval)`.
 */
export function formatRatioInterval(interval: MedianInterval | null): string {
  if (interval === null) return 'n/a';
  if (interval.low === null || interval.high === null) {
    return `${interval.median.toFixed(2)}x (${interval.n} round${interval.n === 1 ? '' : 's'}: no interval)`;
  }
  const range = `${interval.low.toFixed(2)}-${interval.high.toFixed(2)}`;
  return spansOne(interval) ? `no difference shown (${range})` : `${interval.median.toFixed(2)}x (${range})`;
}
