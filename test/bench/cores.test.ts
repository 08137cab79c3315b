import { describe, expect, it } from 'vitest';
import { allowedCpus, loadCpusWanted, parseCpuList, pinnedCommand, planCores } from '../../bench/harness/cores.js';
import { UsageError } from '../../bench/kit/program.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import { splitFor } from '../../bench/macro/column.js';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('parseCpuList', () => {
  it('expands ranges and single CPUs', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
  });
  it("reads this process's affinity", () => {
    expect(allowedCpus().length).toBeGreaterThanOrEqual(1);
  });
});

describe('planCores', () => {
  it('2 CPUs: server on CPU 0, ghz on CPU 1, N reduced to 1 with 2 workers, and a note', () => {
    const plan = planCores(null, [0, 1], true);
    expect(plan.pinned).toBe(true);
    expect(plan.single).toEqual({ serverCpus: [0], loadCpus: [1] });
    expect(plan.multi).toEqual([{ cores: 1, workers: 2, serverCpus: [0], loadCpus: [1] }]);
    expect(plan.notes.join(' ')).toMatch(/N = 1, not 3/);
    expect(plan.notes.join(' ')).toMatch(/2 workers .* on that one core/);
  });

  it('16 CPUs: N = 3 by default, ghz on the 13 others, no note', () => {
    const plan = planCores(null, range(16), true);
    expect(plan.multi).toEqual([{ cores: 3, workers: 3, serverCpus: [0, 1, 2], loadCpus: range(16).slice(3) }]);
    expect(plan.single.loadCpus).toHaveLength(15);
    expect(plan.notes).toEqual([]);
  });

  it('16 CPUs, --server-cores 2,4,8: one split per N, N workers on N CPUs, ghz on the rest; says where ghz has fewer than N + 2', () => {
    const plan = planCores([2, 4, 8], range(16), true);
    expect(plan.multi.map((m) => [m.cores, m.workers, m.serverCpus.length, m.loadCpus.length])).toEqual([
      [2, 2, 2, 14],
      [4, 4, 4, 12],
      [8, 8, 8, 8],
    ]);
    expect(plan.multi[2]?.serverCpus).toEqual(range(8));
    expect(plan.multi[2]?.loadCpus).toEqual(range(16).slice(8));
    expect(loadCpusWanted(8)).toBe(10);
    expect(plan.notes).toEqual([expect.stringMatching(/^N = 8: ghz has 8 CPUs, fewer than N \+ 2 = 10/)]);
  });

  it('builds the scaling matrix of --server-cores 2,4,8: connections 1, N, 5N with 50N, 50N, 250N in flight', () => {
    const plan = planCores([2, 4, 8], range(16), true);
    const multi = buildScenarios(['HS256'], plan.multi).filter((s) => s.group === 'multi');
    expect(multi.map((s) => [s.id, s.connections, s.concurrency, s.workers])).toEqual([
      ['multi2-hs256-1x100', 1, 100, 2],
      ['multi2-hs256-2x100', 2, 100, 2],
      ['multi2-hs256-10x500', 10, 500, 2],
      ['multi4-hs256-1x200', 1, 200, 4],
      ['multi4-hs256-4x200', 4, 200, 4],
      ['multi4-hs256-20x1000', 20, 1000, 4],
      ['multi8-hs256-1x400', 1, 400, 8],
      ['multi8-hs256-8x400', 8, 400, 8],
      ['multi8-hs256-40x2000', 40, 2000, 8],
    ]);
    // Every scenario finds its own CPUs.
    expect(multi.map((s) => splitFor(plan, s).serverCpus.length)).toEqual([2, 2, 2, 4, 4, 4, 8, 8, 8]);
  });

  it('honours --server-cores and refuses one that leaves ghz no CPU', () => {
    expect(planCores(6, range(8), true).multi[0]?.serverCpus).toEqual([0, 1, 2, 3, 4, 5]);
    expect(() => planCores(2, [0, 1], true)).toThrow(UsageError);
    expect(() => planCores([2, 4, 16], range(16), true)).toThrow(/--server-cores 16: this machine allows at most 15/);
  });

  it('follows the allowed CPU ids, not 0..n-1', () => {
    const plan = planCores(null, [4, 5, 6, 7], true);
    expect(plan.single).toEqual({ serverCpus: [4], loadCpus: [5, 6, 7] });
    expect(plan.multi[0]).toMatchObject({ serverCpus: [4, 5, 6], loadCpus: [7] });
  });

  it('without taskset: nothing pinned, and says so', () => {
    const plan = planCores(null, [0, 1, 2, 3], false);
    expect(plan.pinned).toBe(false);
    expect(plan.notes.join(' ')).toMatch(/NOT pinned/);
    expect(pinnedCommand(plan, [0], 'node', ['x.js'])).toEqual({ command: 'node', args: ['x.js'] });
  });

  it('with taskset: prefixes the command', () => {
    const plan = planCores(null, [0, 1, 2, 3], true);
    expect(pinnedCommand(plan, [0, 1], 'ghz', ['--insecure'])).toEqual({ command: 'taskset', args: ['-c', '0,1', 'ghz', '--insecure'] });
  });
});
