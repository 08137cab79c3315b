import { readFileSync } from 'node:fs';
import { UsageError } from '../kit/program.js';
import { findOnPath, tasksetCommand } from '../kit/exec.js';

/** How the machine's CPUs are split between the server under test and ghz. */
export interface CorePlan {
  /** Whether `taskset` exists; without it nothing is pinned and the results say so. */
  readonly pinned: boolean;
  readonly allowedCpus: readonly number[];
  /** CPUs of the server in the 1-core scenarios, and of ghz there. */
  readonly single: CpuSplit;
  /** One split per N of the "N cores" scenarios (`--server-cores 2,4,8`: three), in the order given. */
  readonly multi: readonly MultiSplit[];
  /** Lines for the results and the summary (reductions, missing taskset, a short ghz). */
  readonly notes: readonly string[];
}

export interface CpuSplit {
  readonly serverCpus: readonly number[];
  readonly loadCpus: readonly number[];
}

/** The split of one "N cores" group. */
export interface MultiSplit extends CpuSplit {
  /** N: the CPUs the cluster servers are pinned to. */
  readonly cores: number;
  /**
   * Workers (NODEMAXPROCS) and GOMAXPROCS: N, except 2 when N = 1, so that a machine too
   * small for scaling still measures what the cluster costs (CPU per request of 2 workers
   * against 1 process on the same core).
   */
  readonly workers: number;
}

/**
 * The default N of the "N cores" scenarios: 3, as in the published Node.js-vs-Go
 * comparison of JWT over gRPC whose matrix the macro benchmark follows.
 */
export const DEFAULT_SERVER_CORES = 3;

/**
 * CPUs ghz should have beside a server on N cores: about as many as the server (ghz spends
 * roughly a grpc-js server's CPU per call) plus two for its own runtime and the harness.
 * With fewer, ghz may set the pace: the plan says so, and ⚑ shows where it did.
 */
export function loadCpusWanted(serverCores: number): number {
  return serverCores + 2;
}

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
 * figures measure the scheduler instead of the server, so N is capped at cores - 1: on a
 * 2-core machine the "N cores" scenarios run with N = 1, and say so. `requested` is the
 * N of `--server-cores` (one or several, e.g. [2, 4, 8] on a 16-core machine); null
 * means the default, 3 or what the machine allows.
 */
export function planCores(
  requested: number | readonly number[] | null,
  cpus: readonly number[] = allowedCpus(),
  tasksetAvailable: boolean = findOnPath('taskset') !== null,
): CorePlan {
  const asked = requested === null ? null : typeof requested === 'number' ? [requested] : [...new Set(requested)];
  const notes: string[] = [];
  if (cpus.length < 2 || !tasksetAvailable) {
    notes.push(
      !tasksetAvailable
        ? 'taskset not found: server and ghz are NOT pinned and share all CPUs; figures include their contention'
        : `only ${cpus.length} CPU available: server and ghz share it; figures include their contention`,
    );
    const ns = asked ?? [Math.max(1, Math.min(DEFAULT_SERVER_CORES, cpus.length - 1))];
    return {
      pinned: false,
      allowedCpus: cpus,
      single: { serverCpus: cpus.slice(0, 1), loadCpus: cpus },
      multi: ns.map((n) => ({ cores: n, workers: workersFor(n), serverCpus: cpus.slice(0, n), loadCpus: cpus })),
      notes,
    };
  }
  const maxServerCores = cpus.length - 1;
  const tooMany = (asked ?? []).filter((n) => n > maxServerCores);
  if (tooMany.length > 0) {
    throw new UsageError(
      `--server-cores ${tooMany.join(',')}: this machine allows at most ${maxServerCores} ` +
        `(${cpus.length} CPUs, and ghz keeps at least one of its own)`,
    );
  }
  const ns = asked ?? [Math.min(DEFAULT_SERVER_CORES, maxServerCores)];
  const defaultN = ns[0] as number;
  if (asked === null && defaultN < DEFAULT_SERVER_CORES) {
    notes.push(
      `"N cores" scenarios run with N = ${defaultN}, not ${DEFAULT_SERVER_CORES}: ${cpus.length} CPUs, and ghz keeps ${cpus.length - defaultN} of its own.` +
        (defaultN === 1
          ? ' With N = 1 the cluster servers run 2 workers (NODEMAXPROCS=2, GOMAXPROCS=2) on that one core: their' +
            ' cells measure what the cluster costs (CPU per request against one process), not how it scales.'
          : ''),
    );
  }
  for (const n of ns) {
    const load = cpus.length - n;
    if (n > 1 && load < loadCpusWanted(n)) {
      notes.push(
        `N = ${n}: ghz has ${load} CPU${load === 1 ? '' : 's'}, fewer than N + 2 = ${loadCpusWanted(n)}: it may set the pace (⚑ marks where it was ≥ 90 % busy).`,
      );
    }
  }
  return {
    pinned: true,
    allowedCpus: cpus,
    single: { serverCpus: cpus.slice(0, 1), loadCpus: cpus.slice(1) },
    multi: ns.map((n) => ({ cores: n, workers: workersFor(n), serverCpus: cpus.slice(0, n), loadCpus: cpus.slice(n) })),
    notes,
  };
}

function workersFor(serverCores: number): number {
  return serverCores === 1 ? 2 : serverCores;
}

/** Prefixes a command with `taskset -c <cpus>` when the plan pins (see {@link tasksetCommand}). */
export function pinnedCommand(
  plan: CorePlan,
  cpus: readonly number[],
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return tasksetCommand(plan.pinned ? cpus : [], command, args);
}
