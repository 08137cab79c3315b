import { readdirSync, readFileSync } from 'node:fs';
import { captureOutput } from './exec.js';

/**
 * Readings of Linux /proc for a server's process tree: peak memory and CPU time.
 * Every reader returns null (or skips the process) when an entry is gone, because a
 * process can exit between listing and reading.
 */

let clockTicks: number | undefined;

/** Kernel clock ticks per second, the unit of the CPU times in /proc/<pid>/stat (usually 100). */
export function clockTicksPerSecond(): number {
  clockTicks ??= Number(captureOutput('getconf', ['CLK_TCK']) ?? '100') || 100;
  return clockTicks;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat after the command name, so that index 0 is field 3 (state). */
function statFields(pid: number): string[] | null {
  const text = readText(`/proc/${pid}/stat`);
  if (text === null) return null;
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  return text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(' ');
}

/**
 * Whether the process exists and has not exited: a zombie (exited, not yet reaped by its
 * parent: state Z, field 3) counts as gone, since it runs nothing and holds no port.
 */
export function isAlive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && fields[0] !== 'Z';
}

/** The parent pid (field 4), or null if the process is gone. */
export function parentPid(pid: number): number | null {
  const fields = statFields(pid);
  return fields === null ? null : Number(fields[1]);
}

/**
 * When the process started (field 22, ticks since boot): with the pid, an identity that
 * survives pid reuse, checked before signalling a process listed earlier.
 */
export function startTicks(pid: number): number | null {
  const fields = statFields(pid);
  return fields === null ? null : Number(fields[19]);
}

/**
 * CPU seconds of one process: utime + stime (fields 14, 15) plus cutime + cstime
 * (16, 17). The children's part matters for a tree: when a cluster worker dies and is
 * reaped, its time leaves its own entry and moves into its parent's cutime/cstime, so
 * summing all four over the tree keeps the total steady across such an event. Children
 * still alive are not in cutime, so nothing is counted twice.
 */
export function cpuSeconds(pid: number): number | null {
  const fields = statFields(pid);
  if (fields === null) return null;
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return ticks / clockTicksPerSecond();
}

/** A `kB` line of /proc/<pid>/status (VmHWM, VmRSS...) in bytes, or null. */
export function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  const text = readText(`/proc/${pid}/status`);
  const match = text?.match(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm'));
  return match?.[1] === undefined ? null : Number(match[1]) * 1024;
}

/**
 * The pid and all its live descendants. Found by scanning every /proc/<pid>/stat for
 * its parent rather than through /proc/<pid>/task/<tid>/children, which exists only on
 * kernels built with CONFIG_PROC_CHILDREN.
 */
export function processTree(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const ppid = parentPid(pid);
    if (ppid === null) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  const tree: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** CPU seconds used so far by a process tree (see {@link cpuSeconds}). */
export function treeCpuSeconds(rootPid: number): number {
  return processTree(rootPid).reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
}

/**
 * Peak resident memory of a process tree: the sum of each process's VmHWM (its own
 * high-water mark). Summed because a cluster's primary and workers each hold their own
 * heap; the sum is an upper bound of the tree's true peak, since the processes may peak
 * at different moments and pages they share (the node binary) count once per process.
 */
export function treePeakRssBytes(rootPid: number): number | null {
  const values = processTree(rootPid).map((pid) => statusBytes(pid, 'VmHWM'));
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

/**
 * This process's own CPU seconds and those of its reaped children (cutime + cstime):
 * once the harness has waited for a ghz run, ghz's whole CPU time is in `children`.
 */
export function ownCpuSeconds(): { readonly self: number; readonly children: number } {
  const fields = statFields(process.pid) ?? [];
  const at = (i: number): number => Number(fields[i] ?? 0) / clockTicksPerSecond();
  return { self: at(11) + at(12), children: at(13) + at(14) };
}
