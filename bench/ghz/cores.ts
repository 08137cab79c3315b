import { readFileSync } from 'node:fs';
import { findOnPath } from '../common/exec.js';
import { UsageError } from '../options/usage-error.js';

/** How the machine's CPUs are split between the server under test and ghz. */
export interface CorePlan {
  /** Whether `taskset` exists; without it nothing is pinned and the results say so. */
  readonly pinned: boolean;
  readonly allowedCpus: readonly number[];
  /** CPUs of the 1-core cells' server, and of ghz in those cells. */
  readonly single: CpuSplit;
  /** CPUs of the N-core cells' server, and of ghz in those cells. */
  readonly multi: CpuSplit;
  /** N of the "N cores" cells: the CPUs the cluster servers are pinned to. */
  readonly multiCores: number;
  /**
   * Workers (NODEMAXPROCS) and GOMAXPROCS of the "N cores" cells: N, except 2 when N = 1,
   * so that a machine too small for scaling still measures what the cluster costs
   * (CPU per request of 2 workers against 1 process on the same core).
   */
  readonly multiWorkers: number;
  /** Lines for the results and the summary (reductions, missing taskset). */
  readonly notes: readonly string[];
}

export interface CpuSplit {
  readonly serverCpus: readonly number[];
  readonly loadCpus: readonly number[];
}

/** The default N of the "N cores" cells: the reference's 3. */
export const DEFAULT_SERVER_CORES = 3;

/** Expands a kernel CPU list such as `0-3,8,10-11`. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    if (part === '') continue;
    const [first, last] = part.split('-').map(Number);
    if (first === undefined || !Number.isInteger(first)) throw new Error(`bad CPU list "${list}"`);
    const end = last ?? first;
    for (let cpu = first; cpu <= end; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** The CPUs this process may run on (its affinity, which taskset and containers restrict). */
export function allowedCpus(): number[] {
  const status = readFileSync('/proc/self/status', 'utf8');
  const match = status.match(/^Cpus_allowed_list:\s*(\S+)$/m);
  return match?.[1] === undefined ? [0] : parseCpuList(match[1]);
}

/**
 * Splits the CPUs: the server gets the first 1 (or N) allowed CPUs, ghz all the others.
 * ghz must keep at least one CPU of its own, otherwise client and server compete and the
 * figures measure the scheduler (the reference's first weak point), so N is capped at
 * cores - 1: on a 2-core machine the "N cores" cells run with N = 1, and say so.
 */
export function planCores(requestedServerCores: number | null, cpus: readonly number[] = allowedCpus(), tasksetAvailable: boolean = findOnPath('taskset') !== null): CorePlan {
  const notes: string[] = [];
  if (cpus.length < 2 || !tasksetAvailable) {
    notes.push(
      !tasksetAvailable
        ? 'taskset not found: server and ghz are NOT pinned and share all CPUs; figures include their contention'
        : `only ${cpus.length} CPU available: server and ghz share it; figures include their contention`,
    );
    const n = requestedServerCores ?? Math.max(1, Math.min(DEFAULT_SERVER_CORES, cpus.length - 1));
    return {
      pinned: false,
      allowedCpus: cpus,
      single: { serverCpus: cpus.slice(0, 1), loadCpus: cpus },
      multi: { serverCpus: cpus.slice(0, n), loadCpus: cpus },
      multiCores: n,
      multiWorkers: workersFor(n),
      notes,
    };
  }
  const maxServerCores = cpus.length - 1;
  if (requestedServerCores !== null && requestedServerCores > maxServerCores) {
    throw new UsageError(
      `--server-cores ${requestedServerCores}: this machine allows at most ${maxServerCores} ` +
        `(${cpus.length} CPUs, and ghz keeps at least one of its own)`,
    );
  }
  const n = requestedServerCores ?? Math.min(DEFAULT_SERVER_CORES, maxServerCores);
  if (requestedServerCores === null && n < DEFAULT_SERVER_CORES) {
    notes.push(
      `"N cores" cells run with N = ${n}, not ${DEFAULT_SERVER_CORES}: ${cpus.length} CPUs, and ghz keeps ${cpus.length - n} of its own.` +
        (n === 1
          ? ' With N = 1 the cluster servers run 2 workers (NODEMAXPROCS=2, GOMAXPROCS=2) on that one core: those' +
            ' cells measure what the cluster costs (CPU per request against one process), not how it scales.'
          : ''),
    );
  }
  return {
    pinned: true,
    allowedCpus: cpus,
    single: { serverCpus: cpus.slice(0, 1), loadCpus: cpus.slice(1) },
    multi: { serverCpus: cpus.slice(0, n), loadCpus: cpus.slice(n) },
    multiCores: n,
    multiWorkers: workersFor(n),
    notes,
  };
}

function workersFor(serverCores: number): number {
  return serverCores === 1 ? 2 : serverCores;
}

/** Prefixes a command with `taskset -c <cpus>` when pinning is on (taskset execs it: same pid). */
export function pinnedCommand(plan: CorePlan, cpus: readonly number[], command: string, args: readonly string[]): { command: string; args: string[] } {
  if (!plan.pinned) return { command, args: [...args] };
  return { command: 'taskset', args: ['-c', cpus.join(','), command, ...args] };
}
