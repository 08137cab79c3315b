import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../bench/kit/wait.js';
import { allowedCpus } from '../../bench/harness/cores.js';
import { runCommand } from '../../bench/kit/exec.js';
import { killAll, launch } from '../../bench/kit/launcher.js';
import { cpuTicksDelta, readProcStat } from '../../bench/harness/proc-stat.js';
import {
  clockTicksPerSecond,
  cpuSeconds,
  isAlive,
  ownCpuSeconds,
  parentPid,
  processTree,
  startTicks,
  statusBytes,
  treeCpuSeconds,
  treePeakRssBytes,
} from '../../bench/kit/proc.js';

/**
 * Burns `ms` of CPU time (not wall time: the machine may be shared, and a wall-clock
 * loop then gets only part of a CPU).
 */
function burn(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  while (cpuMs(process.cpuUsage(start)) < ms) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + i);
  expect(x).toBeGreaterThan(0);
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

describe('/proc readings of this test process', () => {
  it('reads a sane clock tick rate', () => {
    expect([100, 250, 300, 1000]).toContain(clockTicksPerSecond());
  });

  it('reads CPU seconds that grow with work and agree with process.cpuUsage()', () => {
    const before = cpuSeconds(process.pid);
    const usageBefore = process.cpuUsage();
    burn(300);
    const after = cpuSeconds(process.pid);
    const usage = process.cpuUsage(usageBefore);
    expect(before).not.toBeNull();
    expect(after).not.toBeNull();
    const measured = (after as number) - (before as number);
    const reference = (usage.user + usage.system) / 1e6;
    // Ticks are 10 ms coarse: allow a few of them.
    expect(measured).toBeGreaterThan(0.2);
    expect(Math.abs(measured - reference)).toBeLessThan(0.1);
  });

  it('reads VmHWM and VmRSS in bytes: peak >= current, current close to process.memoryUsage().rss', () => {
    // RSS first: the peak read afterwards covers it even if memory grew in between.
    const rss = statusBytes(process.pid, 'VmRSS');
    const hwm = statusBytes(process.pid, 'VmHWM');
    expect(hwm).not.toBeNull();
    expect(rss).not.toBeNull();
    expect(hwm as number).toBeGreaterThanOrEqual(rss as number);
    expect(rss as number).toBeGreaterThan(10 * 1024 * 1024);
    expect(Math.abs((rss as number) - process.memoryUsage().rss)).toBeLessThan(64 * 1024 * 1024);
  });

  it('reads its parent pid and start time, and knows it is alive', () => {
    expect(parentPid(process.pid)).toBe(process.ppid);
    expect(startTicks(process.pid)).toBeGreaterThan(0);
    expect(isAlive(process.pid)).toBe(true);
  });

  it("reads busy seconds of the CPUs that cover at least this process's own work", () => {
    const cpus = allowedCpus();
    const statBefore = readProcStat();
    const ownBefore = ownCpuSeconds().self;
    burn(300);
    const busy = cpuTicksDelta(statBefore, readProcStat(), cpus).busy / clockTicksPerSecond();
    const own = ownCpuSeconds().self - ownBefore;
    expect(own).toBeGreaterThan(0.2);
    expect(busy).toBeGreaterThanOrEqual(own - 0.05);
    // And no more than the CPUs could do in the elapsed time (generously).
    expect(busy).toBeLessThan(cpus.length * 2);
  });

  it("counts a waited-for child's CPU time in this process's children time", () => {
    const before = ownCpuSeconds().children;
    const script = 'const s = process.cpuUsage(); for (;;) { const u = process.cpuUsage(s); if (u.user + u.system > 300000) break; }';
    runCommand(process.execPath, ['-e', script]);
    expect(ownCpuSeconds().children - before).toBeGreaterThan(0.2);
  });

  it('returns null for a process that does not exist', () => {
    expect(cpuSeconds(2 ** 22 + 12345)).toBeNull();
    expect(isAlive(2 ** 22 + 12345)).toBe(false);
    expect(statusBytes(2 ** 22 + 12345, 'VmHWM')).toBeNull();
  });
});

describe('process trees', () => {
  afterEach(() => killAll());

  it('finds a child and a grandchild, and sums their memory and CPU', async () => {
    // sh -> sleep: a grandchild, as a cluster primary's workers are.
    const child = launch('sh', ['-c', 'sleep 30 & wait']);
    await sleep(200);
    const tree = processTree(child.pid);
    expect(tree[0]).toBe(child.pid);
    expect(tree.length).toBe(2);
    const mine = processTree(process.pid);
    expect(mine).toContain(child.pid);
    expect(mine).toEqual(expect.arrayContaining(tree));

    const sum = tree.reduce((s, pid) => s + (statusBytes(pid, 'VmHWM') ?? 0), 0);
    expect(treePeakRssBytes(child.pid)).toBe(sum);
    expect(treeCpuSeconds(child.pid)).toBeGreaterThanOrEqual(0);
    // This process's tree includes its own peak plus the children's.
    expect(treePeakRssBytes(process.pid) as number).toBeGreaterThan(statusBytes(process.pid, 'VmHWM') as number);
  });
});
