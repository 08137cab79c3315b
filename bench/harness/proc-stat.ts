/**
 * Per-CPU times of Linux /proc/stat (proc(5)): the `cpuN` lines, in clock ticks since
 * boot, columns user nice system idle iowait irq softirq steal guest guest_nice. guest
 * and guest_nice are already inside user and nice, so they are not added again.
 */
import { readFileSync } from 'node:fs';

/** The columns of one `cpuN` line, ticks since boot. */
export interface CpuTimes {
  readonly user: number;
  readonly nice: number;
  readonly system: number;
  readonly idle: number;
  readonly iowait: number;
  readonly irq: number;
  readonly softirq: number;
  /** Time the hypervisor ran something else while this virtual CPU wanted to run. */
  readonly steal: number;
}

/** CPU number -> its times. */
export type ProcStat = ReadonlyMap<number, CpuTimes>;

/** Parses the `cpuN` lines of /proc/stat text (the aggregate `cpu` line is skipped). */
export function parseProcStat(text: string): ProcStat {
  const cpus = new Map<number, CpuTimes>();
  for (const match of text.matchAll(/^cpu(\d+)\s+(.+)$/gm)) {
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = (match[2] as string)
      .trim()
      .split(/\s+/)
      .map(Number);
    cpus.set(Number(match[1]), { user, nice, system, idle, iowait, irq, softirq, steal });
  }
  return cpus;
}

/** /proc/stat now; empty where it cannot be read (not Linux). */
export function readProcStat(): ProcStat {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return new Map();
  }
}

/** What the given CPUs did between two readings, in ticks. */
export interface CpuTicksDelta {
  /** user + nice + system + irq + softirq: work this guest's kernel saw (steal excluded). */
  readonly busy: number;
  readonly steal: number;
  /** Every column: busy + idle + iowait + steal. */
  readonly total: number;
}

/**
 * The ticks of `cpus` between `before` and `after`. A CPU missing from either reading
 * (offline, or not Linux) contributes nothing.
 */
export function cpuTicksDelta(before: ProcStat, after: ProcStat, cpus: readonly number[]): CpuTicksDelta {
  let busy = 0;
  let steal = 0;
  let total = 0;
  for (const cpu of cpus) {
    const a = before.get(cpu);
    const b = after.get(cpu);
    if (a === undefined || b === undefined) continue;
    const cpuBusy = b.user - a.user + (b.nice - a.nice) + (b.system - a.system) + (b.irq - a.irq) + (b.softirq - a.softirq);
    const cpuSteal = b.steal - a.steal;
    busy += cpuBusy;
    steal += cpuSteal;
    total += cpuBusy + cpuSteal + (b.idle - a.idle) + (b.iowait - a.iowait);
  }
  return { busy, steal, total };
}

/** Share of the CPUs' time the hypervisor took (steal / all ticks); 0 when no tick passed. */
export function stealShare(delta: CpuTicksDelta): number {
  return delta.total > 0 ? delta.steal / delta.total : 0;
}
