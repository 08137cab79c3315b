/**
 * CPU per call at a fixed offered load (issue 34, point 4): the rates capacity planning
 * uses, which do not depend on how hard a load generator can push. Both servers are offered
 * the same open-loop rates, shares of Go's saturated rate measured in the same run, and the
 * server's CPU time is read from /proc around each run (harness/contention.ts, as the h2load
 * cells read it). This file holds the computing parts; the runs are the open-loop section's
 * (open-loop.ts), which offers these rates to both servers beside its latency points.
 */
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { median } from '../common/stats.js';
import { pairedRatio } from './h2load-section.js';

/** Shares of Go's saturated rate offered to both servers: a quarter, half and most of what Go can do on one core. */
export const FIXED_LOAD_FRACTIONS = [0.25, 0.5, 0.8] as const;

/** One open-loop run's server side: what the CPU ratio needs of it. */
export interface ServerCpuRun {
  readonly round: number;
  /** Server CPU seconds (process tree, /proc) over the generator's run. */
  readonly serverCpuS: number;
  /** Wall seconds of that window. */
  readonly wallS: number;
  /** OK calls the generator counted. */
  readonly ok: number;
}

/** The rate offered at each share of Go's saturated requests/s, rounded to a whole call a second. */
export function fractionRates(
  goCapacity: number,
  fractions: readonly number[] = FIXED_LOAD_FRACTIONS,
): { fraction: number; offeredRps: number }[] {
  if (!(goCapacity > 0) || !Number.isFinite(goCapacity)) return [];
  return fractions.map((fraction) => ({ fraction, offeredRps: Math.round(goCapacity * fraction) }));
}

/** Server CPU µs per OK call; NaN where no call was OK (a round with no figure, left out of medians). */
export function cpuPerCallUs(serverCpuS: number, ok: number): number {
  return ok > 0 && serverCpuS >= 0 ? (serverCpuS / ok) * 1e6 : Number.NaN;
}

/** Median CPU µs per call over the runs with its interval; null without a run that had an OK call. */
export function cpuPerCallFigure(runs: readonly ServerCpuRun[], key: string): MedianInterval | null {
  const values = runs.map((r) => cpuPerCallUs(r.serverCpuS, r.ok)).filter((v) => Number.isFinite(v));
  return values.length === 0 ? null : bootstrapMedian(values, seedFor(key));
}

/** Median busy share of the server's core (CPU time / wall time); null without a run. */
export function serverBusy(runs: readonly ServerCpuRun[]): number | null {
  const shares = runs.filter((r) => r.wallS > 0).map((r) => r.serverCpuS / r.wallS);
  return shares.length === 0 ? null : median(shares);
}

/**
 * CPU per call ours / Go, taken round by round (the two servers' runs at one rate in the
 * same round, seconds apart, share the VM's state), as a median with its interval:
 * < 1 means ours spends less CPU per call at that load.
 */
export function cpuPerCallRatio(ours: readonly ServerCpuRun[], go: readonly ServerCpuRun[], key: string): MedianInterval | null {
  const values = (runs: readonly ServerCpuRun[]) => runs.map((r) => ({ round: r.round, value: cpuPerCallUs(r.serverCpuS, r.ok) }));
  return pairedRatio(values(ours), values(go), key);
}

/** One row of the summary's table: one algorithm at one share of Go's capacity. */
export interface FixedLoadRow {
  readonly algorithm: string;
  readonly fractionOfGoCapacity: number;
  readonly offeredRps: number;
  /** Each server's CPU µs per call and busy share at that rate; null where it was not measured. */
  readonly ours: { readonly cpuPerCallUs: MedianInterval | null; readonly serverCpu: number | null; readonly achievedRps: number } | null;
  readonly go: { readonly cpuPerCallUs: MedianInterval | null; readonly serverCpu: number | null; readonly achievedRps: number } | null;
  /** CPU per call ours / Go, per round. */
  readonly ratio: MedianInterval | null;
  /** Rounds of either server disturbed by other processes or steal. */
  readonly disturbedRounds: number;
}

/** The open-loop results' shapes this table reads (bench/load/results.ts). */
interface PointLike {
  readonly server: string;
  readonly algorithm: string;
  readonly fractionOfGoCapacity?: number;
  readonly achievedRps: number;
  readonly cpuPerCallUs?: MedianInterval | null;
  readonly serverCpu?: number | null;
  readonly disturbedRounds?: number;
}
interface RatioLike {
  readonly algorithm: string;
  readonly fractionOfGoCapacity: number;
  readonly offeredRps: number;
  readonly cpuPerCallRatio?: MedianInterval | null;
}

/**
 * The rows of the fixed-load table, from the open-loop points and ratios: one per
 * (algorithm, share of Go's capacity) that has a CPU ratio, by algorithm then share.
 * Runs written before CPU was measured give none.
 */
export function fixedLoadRows(points: readonly PointLike[], ratios: readonly RatioLike[]): FixedLoadRow[] {
  const side = (server: string, r: RatioLike) => {
    const p = points.find((x) => x.server === server && x.algorithm === r.algorithm && x.fractionOfGoCapacity === r.fractionOfGoCapacity);
    return p === undefined
      ? null
      : { point: p, figures: { cpuPerCallUs: p.cpuPerCallUs ?? null, serverCpu: p.serverCpu ?? null, achievedRps: p.achievedRps } };
  };
  return ratios
    .filter((r) => r.cpuPerCallRatio !== undefined && r.cpuPerCallRatio !== null)
    .map((r) => {
      const ours = side('jwt-grpc', r);
      const go = side('go', r);
      return {
        algorithm: r.algorithm,
        fractionOfGoCapacity: r.fractionOfGoCapacity,
        offeredRps: r.offeredRps,
        ours: ours?.figures ?? null,
        go: go?.figures ?? null,
        ratio: r.cpuPerCallRatio ?? null,
        disturbedRounds: (ours?.point.disturbedRounds ?? 0) + (go?.point.disturbedRounds ?? 0),
      };
    })
    .sort((a, b) => a.algorithm.localeCompare(b.algorithm) || a.fractionOfGoCapacity - b.fractionOfGoCapacity);
}
