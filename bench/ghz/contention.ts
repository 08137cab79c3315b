import { cpuBusySeconds, ownCpuSeconds, treeCpuSeconds } from './proc.js';

/** CPU counters read just before and just after a measured ghz run. */
export interface CpuSnapshot {
  readonly at: number;
  readonly machineBusy: number;
  readonly server: number;
  readonly harness: number;
  readonly harnessChildren: number;
}

export function cpuSnapshot(serverPid: number, cpus: readonly number[]): CpuSnapshot {
  const own = ownCpuSeconds();
  return { at: Date.now(), machineBusy: cpuBusySeconds(cpus), server: treeCpuSeconds(serverPid), harness: own.self, harnessChildren: own.children };
}

/** What a run cost and who else used the CPUs meanwhile. */
export interface RunCpu {
  readonly serverCpuSeconds: number;
  /** ghz's exact CPU time (it is a reaped child of the harness by the second snapshot). */
  readonly ghzCpuSeconds: number;
  /**
   * Share of the benchmark's CPUs (server's and ghz's) used by anything else during the
   * run: other processes, the kernel on their behalf, a hypervisor's steal. The
   * benchmark owns the machine only if this is near 0; other engineers' test runs, a
   * build, or a noisy VM neighbour show up here and mark the cell.
   */
  readonly foreignCpuShare: number;
}

export function runCpu(before: CpuSnapshot, after: CpuSnapshot, cpuCount: number): RunCpu {
  const serverCpuSeconds = after.server - before.server;
  const ghzCpuSeconds = after.harnessChildren - before.harnessChildren;
  const harness = after.harness - before.harness;
  const foreign = after.machineBusy - before.machineBusy - serverCpuSeconds - ghzCpuSeconds - harness;
  const capacity = ((after.at - before.at) / 1000) * cpuCount;
  return { serverCpuSeconds, ghzCpuSeconds, foreignCpuShare: capacity > 0 ? Math.max(0, foreign) / capacity : 0 };
}
