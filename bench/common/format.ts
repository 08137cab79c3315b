/** Number formatting shared by the progress line and the tables. */

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

export function formatMiB(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1024 / 1024).toFixed(0) : 'n/a';
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
