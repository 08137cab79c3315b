import type { GhzJsonReport } from '../../bench/ghz/ghz-report.js';

/**
 * One call of ghz's per-call details. `timestamp` is when the call **ended**: ghz's stats
 * handler reports `stats.End.EndTime` (runner/stats_handler.go, v0.120.0); `latency` is
 * in nanoseconds.
 */
export interface GhzDetail {
  readonly timestamp: string;
  readonly latency: number;
  readonly error: string;
  readonly status: string;
}

export type GhzReportWithDetails = Omit<GhzJsonReport, 'details'> & { readonly details?: readonly GhzDetail[] | null };

/** Wall-clock ms of a ghz detail's end (its RFC 3339 timestamp with nanoseconds). */
export function detailEndMs(detail: GhzDetail): number {
  return Date.parse(detail.timestamp.replace(/(\.\d{3})\d*/, '$1'));
}

/** Wall-clock ms of a ghz detail's start: its end less its latency. */
export function detailStartMs(detail: GhzDetail): number {
  return detailEndMs(detail) - detail.latency / 1e6;
}

/** Non-OK responses by error message. */
export function errorsOf(report: GhzReportWithDetails): Record<string, number> {
  return { ...(report.errorDistribution ?? {}) };
}

export function okCount(report: GhzReportWithDetails): number {
  return report.statusCodeDistribution?.['OK'] ?? 0;
}
