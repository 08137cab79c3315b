/**
 * Parsing of ghz's JSON report (`-O json`). Durations in it are Go time.Duration
 * values: integers of nanoseconds.
 */

/** The part of ghz's report the harness reads. */
export interface GhzJsonReport {
  readonly count: number;
  readonly total: number;
  readonly average: number;
  readonly rps: number;
  readonly endReason?: string;
  readonly errorDistribution?: Readonly<Record<string, number>> | null;
  readonly statusCodeDistribution?: Readonly<Record<string, number>> | null;
  readonly latencyDistribution?: readonly { readonly percentage: number; readonly latency: number }[] | null;
  readonly details?: readonly { readonly latency: number; readonly error: string; readonly status: string }[] | null;
}

/** What one measured ghz run yielded. */
export interface GhzSummary {
  /** Every response, OK or not. */
  readonly count: number;
  readonly okCount: number;
  /** Non-OK responses by gRPC status name (e.g. `Unavailable`); empty when all were OK. */
  readonly nonOkByStatus: Readonly<Record<string, number>>;
  /** Error messages and their counts, as ghz grouped them. */
  readonly errors: Readonly<Record<string, number>>;
  /** Wall time of the run as ghz measured it, including the wait for the last calls. */
  readonly totalSeconds: number;
  /** OK responses per second: the figure the tables report. */
  readonly rpsOk: number;
  /** ghz's own rps, which counts errors too (kept for comparison, never reported as throughput). */
  readonly rpsAllResponses: number;
  /** Latencies of OK responses, ms. */
  readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p90: number; readonly p99: number };
  readonly endReason: string;
}

const NS_PER_MS = 1e6;

/**
 * Summarises a ghz JSON report. Throughput counts OK responses only (rps_ok =
 * ok / total duration): a server that answers errors quickly (ENHANCE_YOUR_CALM,
 * Unavailable) must not look fast, as ghz's own `rps`, which counts errors, makes it
 * look (a grpc-js echo server once showed 88k "rps" of which 99 % were RESOURCE_EXHAUSTED).
 * Percentiles are ghz's, which it computes over OK responses only; the mean is
 * recomputed from the per-call details over OK responses too, because ghz's `average`
 * includes errors. Without details (ghz keeps at most 1,000,000) ghz's average is used.
 */
export function summarizeGhzReport(report: GhzJsonReport): GhzSummary {
  if (typeof report.count !== 'number' || typeof report.total !== 'number') {
    throw new Error('not a ghz JSON report (count/total missing)');
  }
  const statuses = report.statusCodeDistribution ?? {};
  const okCount = statuses['OK'] ?? 0;
  const nonOkByStatus = Object.fromEntries(Object.entries(statuses).filter(([status, n]) => status !== 'OK' && n > 0));
  const totalSeconds = report.total / 1e9;
  const percentile = (p: number): number => {
    const entry = report.latencyDistribution?.find((d) => d.percentage === p);
    return entry === undefined ? Number.NaN : entry.latency / NS_PER_MS;
  };
  return {
    count: report.count,
    okCount,
    nonOkByStatus,
    errors: { ...(report.errorDistribution ?? {}) },
    totalSeconds,
    rpsOk: totalSeconds > 0 ? okCount / totalSeconds : 0,
    rpsAllResponses: report.rps,
    latencyMs: { mean: okMeanMs(report), p50: percentile(50), p90: percentile(90), p99: percentile(99) },
    endReason: report.endReason ?? '',
  };
}

function okMeanMs(report: GhzJsonReport): number {
  const details = report.details ?? [];
  if (details.length === 0 || details.length < report.count) return report.count > 0 ? report.average / NS_PER_MS : Number.NaN;
  let sum = 0;
  let n = 0;
  for (const d of details) {
    if (d.error === '' && d.status === 'OK') {
      sum += d.latency;
      n += 1;
    }
  }
  return n === 0 ? Number.NaN : sum / n / NS_PER_MS;
}

/** The report without its per-call details (up to a million entries): what the results keep. */
export function withoutDetails<T extends GhzJsonReport>(report: T): Omit<T, 'details'> {
  const { details: _details, ...rest } = report;
  return rest;
}

/**
 * The report with the tokens it echoes replaced by a note of their length: the request's
 * `jwt` (the VerifyJwt cells' fixed token) and the `authorization` metadata (the protected
 * cells' bearer token). Results and HTML pages never hold a usable token.
 */
export function redactToken<T extends GhzJsonReport>(report: T): T {
  const options = (report as { options?: { data?: unknown; metadata?: unknown } }).options;
  if (options === undefined) return report;
  const redacted = (token: string): string => `<token redacted: ${token.length} characters>`;
  const redactField = (record: unknown, field: string): unknown => {
    if (typeof record !== 'object' || record === null) return record;
    const value = (record as Record<string, unknown>)[field];
    return typeof value === 'string' ? { ...record, [field]: redacted(value) } : record;
  };
  const data = redactField(options.data, 'jwt');
  const metadata = redactField(options.metadata, 'authorization');
  if (data === options.data && metadata === options.metadata) return report;
  return { ...report, options: { ...options, data, metadata } };
}
