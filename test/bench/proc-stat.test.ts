import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cpuSnapshot, runCpu } from '../../bench/harness/contention.js';
import { clockTicksPerSecond } from '../../bench/kit/proc.js';
import { cpuTicksDelta, parseProcStat, readProcStat, stealShare } from '../../bench/harness/proc-stat.js';

/** /proc/stat of a 4-CPU guest, one second apart (hand-written in the kernel's format, see proc(5)). */
const before = parseProcStat(readFileSync(new URL('./fixtures/proc-stat-before.txt', import.meta.url), 'utf8'));
const after = parseProcStat(readFileSync(new URL('./fixtures/proc-stat-after.txt', import.meta.url), 'utf8'));

describe('parseProcStat', () => {
  it('reads every cpuN line by column, and skips the aggregate line and the rest', () => {
    expect([...before.keys()]).toEqual([0, 1, 2, 3]);
    expect(before.get(0)).toEqual({ user: 134095, nice: 0, system: 28294, idle: 1005021, iowait: 863, irq: 0, softirq: 1352, steal: 9038 });
    expect(before.get(3)?.nice).toBe(5);
  });

  it("reads this machine's /proc/stat: every allowed CPU is there", () => {
    const stat = readProcStat();
    expect(stat.size).toBeGreaterThanOrEqual(1);
    expect(stat.get(0)?.idle).toBeGreaterThan(0);
  });
});

describe('cpuTicksDelta', () => {
  it("splits a CPU's ticks between busy, steal and the rest", () => {
    // CPU 0: user +70, system +15, idle +5, steal +10.
    expect(cpuTicksDelta(before, after, [0])).toEqual({ busy: 85, steal: 10, total: 100 });
  });

  it('sums only the CPUs asked for', () => {
    expect(cpuTicksDelta(before, after, [1])).toEqual({ busy: 45, steal: 5, total: 100 });
    expect(cpuTicksDelta(before, after, [0, 1])).toEqual({ busy: 130, steal: 15, total: 200 });
    // CPU 3: nice counts as busy (+2), as does softirq on CPU 2 (+10).
    expect(cpuTicksDelta(before, after, [2, 3])).toEqual({ busy: 80 + 51, steal: 15, total: 200 });
  });

  it('ignores a CPU missing from a reading', () => {
    expect(cpuTicksDelta(before, after, [0, 7])).toEqual(cpuTicksDelta(before, after, [0]));
    expect(cpuTicksDelta(before, new Map(), [0])).toEqual({ busy: 0, steal: 0, total: 0 });
  });
});

describe('stealShare', () => {
  it('is steal over all ticks of the CPUs', () => {
    expect(stealShare(cpuTicksDelta(before, after, [0]))).toBeCloseTo(0.1, 12);
    expect(stealShare(cpuTicksDelta(before, after, [0, 1, 2, 3]))).toBeCloseTo(30 / 400, 12);
  });
  it('is 0 when no tick passed', () => {
    expect(stealShare({ busy: 0, steal: 0, total: 0 })).toBe(0);
  });
});

describe('runCpu', () => {
  const tick = 1 / clockTicksPerSecond();
  const snapshot = (at: number, stat: typeof before, server: number, harness: number, harnessChildren: number) => ({
    at,
    stat,
    server,
    harness,
    harnessChildren,
  });

  it('gives the rest of the busy time to other processes, and steal apart, per CPU set', () => {
    // 1 s on CPUs 0 and 1 (server on 0): busy 130 ticks; server 80, ghz 30, harness 10 ticks; others 10 ticks.
    const cpu = runCpu(snapshot(0, before, 0, 0, 0), snapshot(1000, after, 80 * tick, 10 * tick, 30 * tick), [0, 1], [0]);
    expect(cpu.serverCpuSeconds).toBeCloseTo(80 * tick, 9);
    expect(cpu.ghzCpuSeconds).toBeCloseTo(30 * tick, 9);
    expect(cpu.foreignCpuShare).toBeCloseTo((10 * tick) / 2, 9);
    expect(cpu.serverStealShare).toBeCloseTo(0.1, 9);
    expect(cpu.stealShare).toBeCloseTo(0.075, 9);
  });

  it('never reports a negative share (tick rounding)', () => {
    const cpu = runCpu(snapshot(0, before, 0, 0, 0), snapshot(1000, after, 200 * tick, 0, 0), [0, 1]);
    expect(cpu.foreignCpuShare).toBe(0);
  });

  it('reads live counters', () => {
    const first = cpuSnapshot(process.pid);
    expect(first.stat.size).toBeGreaterThan(0);
    expect(first.server).toBeGreaterThan(0);
  });
});
