import { spread } from '../common/stats.js';
import { CONTENDED_SHARE, STOLEN_SHARE } from '../harness/contention.js';
import { probeDisturbed } from '../harness/probe.js';
import type { CellAggregate, CellFlag, RoundFlag, RoundResult } from './results.js';

/** Load-generator CPU busy fraction from which a round is marked as possibly load-bound. */
export const LOAD_BOUND_UTILIZATION = 0.9;

/** The flags that say the machine, not the server, may have moved a round's figures. */
const DISTURBANCES: readonly RoundFlag[] = ['contended', 'stolen', 'slowed'];

/** The marks one round earns from its own figures (its probe deviation included once known). */
export function roundFlags(round: Omit<RoundResult, 'flags'>): RoundFlag[] {
  const flags: RoundFlag[] = [];
  if (Object.keys(round.ghz.nonOkByStatus).length > 0) flags.push('non-ok');
  if ((round.loadCpuUtilization ?? 0) >= LOAD_BOUND_UTILIZATION) flags.push('load-bound');
  if (round.foreignCpuShare > CONTENDED_SHARE) flags.push('contended');
  if (Math.max(round.stealShare, round.serverStealShare) > STOLEN_SHARE) flags.push('stolen');
  if (probeDisturbed(round.probeDeviation)) flags.push('slowed');
  return flags;
}

/** Median (min-max) of every figure over the rounds, and the summed counts. */
export function aggregateRounds(rounds: readonly RoundResult[]): CellAggregate | null {
  if (rounds.length === 0) return null;
  const nonOkByStatus: Record<string, number> = {};
  for (const round of rounds) {
    for (const [status, n] of Object.entries(round.ghz.nonOkByStatus)) nonOkByStatus[status] = (nonOkByStatus[status] ?? 0) + n;
  }
  const loads = rounds.map((r) => r.loadCpuUtilization).filter((u): u is number => u !== null);
  const deviations = rounds.map((r) => r.probeDeviation).filter((d): d is number => d !== null);
  return {
    rpsOk: spread(rounds.map((r) => r.ghz.rpsOk)),
    meanMs: spread(rounds.map((r) => r.ghz.latencyMs.mean)),
    p50Ms: spread(rounds.map((r) => r.ghz.latencyMs.p50)),
    p90Ms: spread(rounds.map((r) => r.ghz.latencyMs.p90)),
    p99Ms: spread(rounds.map((r) => r.ghz.latencyMs.p99)),
    serverCpuUsPerRequest: spread(rounds.map((r) => r.serverCpuUsPerRequest)),
    serverCpuUtilization: spread(rounds.map((r) => r.serverCpuUtilization)),
    okCount: rounds.reduce((sum, r) => sum + r.ghz.okCount, 0),
    nonOkCount: Object.values(nonOkByStatus).reduce((a, b) => a + b, 0),
    nonOkByStatus,
    maxLoadCpuUtilization: loads.length === 0 ? null : Math.max(...loads),
    maxForeignCpuShare: Math.max(...rounds.map((r) => r.foreignCpuShare)),
    maxStealShare: Math.max(...rounds.map((r) => Math.max(r.stealShare, r.serverStealShare))),
    maxProbeDeviation: deviations.length === 0 ? null : deviations.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a)),
    disturbedRounds: rounds.filter((r) => r.flags.some((f) => DISTURBANCES.includes(f))).length,
  };
}

/** A cell's marks: every mark of any of its rounds, plus what happened to the cell itself. */
export function cellFlags(rounds: readonly RoundResult[], extra: readonly CellFlag[] = []): CellFlag[] {
  return [...new Set<CellFlag>([...rounds.flatMap((r) => r.flags), ...extra])];
}
