import { spread } from '../common/stats.js';
import type { CellAggregate, CellFlag, RepetitionResult } from './results.js';

/** Load-generator CPU busy fraction from which a cell is marked as possibly load-bound. */
export const LOAD_BOUND_UTILIZATION = 0.9;
/** Share of the benchmark's CPUs taken by other work from which a cell is marked as contended. */
export const CONTENDED_SHARE = 0.05;

/** Median (min-max) of every figure over the repetitions, and the summed counts. */
export function aggregateRepetitions(reps: readonly RepetitionResult[]): CellAggregate | null {
  if (reps.length === 0) return null;
  const nonOkByStatus: Record<string, number> = {};
  for (const rep of reps) {
    for (const [status, n] of Object.entries(rep.ghz.nonOkByStatus)) nonOkByStatus[status] = (nonOkByStatus[status] ?? 0) + n;
  }
  const loads = reps.map((r) => r.loadCpuUtilization).filter((u): u is number => u !== null);
  return {
    rpsOk: spread(reps.map((r) => r.ghz.rpsOk)),
    meanMs: spread(reps.map((r) => r.ghz.latencyMs.mean)),
    p50Ms: spread(reps.map((r) => r.ghz.latencyMs.p50)),
    p90Ms: spread(reps.map((r) => r.ghz.latencyMs.p90)),
    p99Ms: spread(reps.map((r) => r.ghz.latencyMs.p99)),
    serverCpuUsPerRequest: spread(reps.map((r) => r.serverCpuUsPerRequest)),
    okCount: reps.reduce((sum, r) => sum + r.ghz.okCount, 0),
    nonOkCount: Object.values(nonOkByStatus).reduce((a, b) => a + b, 0),
    nonOkByStatus,
    maxLoadCpuUtilization: loads.length === 0 ? null : Math.max(...loads),
    maxForeignCpuShare: Math.max(...reps.map((r) => r.foreignCpuShare)),
  };
}

/** The marks a cell earns from its figures. */
export function flagsOf(aggregate: CellAggregate | null, extra: readonly CellFlag[] = []): CellFlag[] {
  const flags = new Set<CellFlag>(extra);
  if (aggregate !== null) {
    if (aggregate.nonOkCount > 0) flags.add('non-ok');
    if ((aggregate.maxLoadCpuUtilization ?? 0) >= LOAD_BOUND_UTILIZATION) flags.add('load-bound');
    if (aggregate.maxForeignCpuShare > CONTENDED_SHARE) flags.add('contended');
  }
  return [...flags];
}
