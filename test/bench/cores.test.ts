import { describe, expect, it } from 'vitest';
import { allowedCpus, parseCpuList, pinnedCommand, planCores } from '../../bench/ghz/cores.js';
import { UsageError } from '../../bench/options/usage-error.js';

describe('parseCpuList', () => {
  it('expands ranges and single CPUs', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
  });
  it('reads this process\'s affinity', () => {
    expect(allowedCpus().length).toBeGreaterThanOrEqual(1);
  });
});

describe('planCores', () => {
  it('2 CPUs: server on CPU 0, ghz on CPU 1, N reduced to 1 with a note', () => {
    const plan = planCores(null, [0, 1], true);
    expect(plan.pinned).toBe(true);
    expect(plan.single).toEqual({ serverCpus: [0], loadCpus: [1] });
    expect(plan.multi).toEqual({ serverCpus: [0], loadCpus: [1] });
    expect(plan.multiCores).toBe(1);
    expect(plan.multiWorkers).toBe(2);
    expect(plan.notes.join(' ')).toMatch(/N = 1, not 3/);
    expect(plan.notes.join(' ')).toMatch(/2 workers .* on that one core/);
  });

  it('16 CPUs: N = 3 by default, ghz on the 13 others, no note', () => {
    const cpus = Array.from({ length: 16 }, (_, i) => i);
    const plan = planCores(null, cpus, true);
    expect(plan.multiCores).toBe(3);
    expect(plan.multiWorkers).toBe(3);
    expect(plan.multi.serverCpus).toEqual([0, 1, 2]);
    expect(plan.multi.loadCpus).toHaveLength(13);
    expect(plan.single.loadCpus).toHaveLength(15);
    expect(plan.notes).toEqual([]);
  });

  it('honours --server-cores and refuses one that leaves ghz no CPU', () => {
    expect(planCores(6, Array.from({ length: 8 }, (_, i) => i), true).multi.serverCpus).toEqual([0, 1, 2, 3, 4, 5]);
    expect(() => planCores(2, [0, 1], true)).toThrow(UsageError);
  });

  it('follows the allowed CPU ids, not 0..n-1', () => {
    const plan = planCores(null, [4, 5, 6, 7], true);
    expect(plan.single).toEqual({ serverCpus: [4], loadCpus: [5, 6, 7] });
    expect(plan.multi).toEqual({ serverCpus: [4, 5, 6], loadCpus: [7] });
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
