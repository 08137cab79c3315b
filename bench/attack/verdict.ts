/**
 * What an attack cell means for the legitimate caller, judged against the targets every
 * attack must meet: at least {@link MIN_SUCCESS} of the legitimate calls OK, at p99 under
 * {@link MAX_P99_MS}; under connection churn, the server's peak RSS at most
 * {@link MAX_CHURN_PEAK} times its RSS after warm-up, and back within {@link MAX_SETTLED_DRIFT}
 * of it {@link SETTLE_MS} ms after the attack.
 */
import type { CallRecord, CallerRecords } from './caller.js';
import { type CellResult, SETTLE_MS } from './cell.js';

export const MIN_SUCCESS = 0.99;
export const MAX_P99_MS = 1000;
export const MAX_CHURN_PEAK = 1.5;
export const MAX_SETTLED_DRIFT = 0.1;

/** How one kind of legitimate call fared. */
export interface CallSummary {
  readonly calls: number;
  readonly ok: number;
  /** OK calls over all calls; 1 when there were none. */
  readonly successRate: number;
  /** The 99th percentile of every call's time (failed calls included: a refusal is an answer too). */
  readonly p99Ms: number;
  /** The most frequent failures, with their counts. */
  readonly failures: readonly string[];
}

/** The value below which `q` of `values` lie (nearest rank). */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

export function summarizeCalls(records: readonly CallRecord[]): CallSummary {
  const ok = records.filter((record) => record.ok).length;
  const failures = new Map<string, number>();
  for (const record of records) if (!record.ok) failures.set(record.error ?? '?', (failures.get(record.error ?? '?') ?? 0) + 1);
  return {
    calls: records.length,
    ok,
    successRate: records.length === 0 ? 1 : ok / records.length,
    p99Ms: percentile(
      records.map((record) => record.ms),
      0.99,
    ),
    failures: [...failures]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([error, count]) => `${count}x ${error}`),
  };
}

export interface CellVerdict {
  readonly calls: Readonly<Record<keyof CallerRecords, CallSummary>>;
  /** Each target missed, in words; empty when the cell met them all. */
  readonly missed: readonly string[];
}

const KINDS: readonly (keyof CallerRecords)[] = ['fresh', 'longLived', 'discovery', 'metrics'];

export function judgeCell(result: CellResult): CellVerdict {
  const calls = Object.fromEntries(KINDS.map((kind) => [kind, summarizeCalls(result.caller[kind])])) as Record<
    keyof CallerRecords,
    CallSummary
  >;
  const missed: string[] = [];
  for (const kind of KINDS) {
    const summary = calls[kind];
    if (summary.calls === 0) continue;
    if (summary.successRate < MIN_SUCCESS) missed.push(`${kind}: ${(summary.successRate * 100).toFixed(1)} % OK`);
    if (summary.p99Ms >= MAX_P99_MS) missed.push(`${kind}: p99 ${Math.round(summary.p99Ms)} ms`);
  }
  const { warm, peak, settled } = result.rss;
  if (result.spec.attack === 'churn' && warm > 0) {
    if (peak > MAX_CHURN_PEAK * warm) missed.push(`peak RSS ${(peak / warm).toFixed(2)}x warm`);
    if (settled !== undefined && Math.abs(settled - warm) > MAX_SETTLED_DRIFT * warm)
      missed.push(`RSS ${(settled / warm).toFixed(2)}x warm ${(result.spec.settleMs ?? SETTLE_MS) / 1000} s after`);
  }
  return { calls, missed };
}
