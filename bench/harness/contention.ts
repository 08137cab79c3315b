import { clockTicksPerSecond, ownCpuSeconds, treeCpuSeconds } from '../kit/proc.js';
import { type ProcStat, cpuTicksDelta, readProcStat, stealShare } from './proc-stat.js';

/** Share of the benchmark's CPUs taken by other processes from which a figure is marked as contended (⊘). */
export const CONTENDED_SHARE = 0.05;

/**
 * Share of a measurement's CPU time stolen by the hypervisor from which it is marked (◐).
 * Steal that is steady slows every server of a round alike and cancels in the per-round
 * ratios; this VM shows a few percent of it under load on an ordinary day. Above a tenth
 * of the time, the guest lost more than the rounds resolve, unevenly or not.
 */
export const STOLEN_SHARE = 0.1;

/** CPU counters read just before and just after a measured run. */
export interface CpuSnapshot {
  readonly at: number;
  readonly stat: ProcStat;
  readonly server: number;
  readonly harness: number;
  readonly harnessChildren: number;
}

/** The counters now; `serverPid` null when the work measured runs in this process (micro benchmarks). */
export function cpuSnapshot(serverPid: number | null): CpuSnapshot {
  const own = ownCpuSeconds();
  const server = serverPid === null ? 0 : treeCpuSeconds(serverPid);
  return { at: performance.now(), stat: readProcStat(), server, harness: own.self, harnessChildren: own.children };
}

/** What a run cost, who else used the CPUs meanwhile, and what the hypervisor took. */
export interface RunCpu {
  readonly serverCpuSeconds: number;
  /** ghz's exact CPU time (it is a reaped child of the harness by the second snapshot). */
  readonly ghzCpuSeconds: number;
  /**
   * Share of the benchmark's CPUs (server's and ghz's) used by other processes during
   * the run: the busy time the guest kernel saw, less server, ghz and harness. Other
   * engineers' test runs or a build show up here and mark the cell. Steal is not in it.
   */
  readonly foreignCpuShare: number;
  /** Steal / all ticks of the server's CPUs: time the server could not run. */
  readonly serverStealShare: number;
  /** The same over all the benchmark's CPUs. */
  readonly stealShare: number;
}

/**
 * The run between two snapshots over `cpus` (all the benchmark's CPUs), of which
 * `serverCpus` are the server's.
 */
export function runCpu(before: CpuSnapshot, after: CpuSnapshot, cpus: readonly number[], serverCpus: readonly number[] = cpus): RunCpu {
  const serverCpuSeconds = after.server - before.server;
  const ghzCpuSeconds = after.harnessChildren - before.harnessChildren;
  const harness = after.harness - before.harness;
  const all = cpuTicksDelta(before.stat, after.stat, cpus);
  const foreign = all.busy / clockTicksPerSecond() - serverCpuSeconds - ghzCpuSeconds - harness;
  const capacity = ((after.at - before.at) / 1000) * cpus.length;
  return {
    serverCpuSeconds,
    ghzCpuSeconds,
    foreignCpuShare: capacity > 0 ? Math.max(0, foreign) / capacity : 0,
    serverStealShare: stealShare(cpuTicksDelta(before.stat, after.stat, serverCpus)),
    stealShare: stealShare(all),
  };
}
