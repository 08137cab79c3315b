/**
 * The deadlines of a connection's calls in one heap under one timer: each call told when its
 * deadline passes, in deadline order, none told once removed, and no timer left after stop.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type DeadlineEntry, Deadlines } from '../../../src/transport/http2/deadlines.js';

// The module reads the clock through node:perf_hooks (an import, not the global getter): it is
// pointed at the global, which the fake timers below replace.
vi.mock('node:perf_hooks', () => ({ performance: { now: () => globalThis.performance.now() } }));

function entry(name: string, passed: string[]): DeadlineEntry {
  return { deadlineAt: 0, deadlineSlot: -1, deadlinePassed: () => passed.push(name) };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Deadlines', () => {
  it('tells each call when its deadline passes, in deadline order whatever the order added', () => {
    const deadlines = new Deadlines();
    const passed: string[] = [];
    for (const [name, ms] of [
      ['c', 300],
      ['a', 100],
      ['d', 400],
      ['b', 200],
      ['e', 250],
    ] as const)
      deadlines.add(entry(name, passed), ms);
    vi.advanceTimersByTime(99);
    expect(passed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(passed).toEqual(['a']);
    vi.advanceTimersByTime(300);
    expect(passed).toEqual(['a', 'b', 'e', 'c', 'd']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not tell a call removed before its deadline, wherever it sat in the heap', () => {
    const deadlines = new Deadlines();
    const passed: string[] = [];
    const entries = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => entry(name, passed));
    entries.forEach((e, i) => deadlines.add(e, 100 * (i + 1)));
    deadlines.remove(entries[0] as DeadlineEntry);
    deadlines.remove(entries[3] as DeadlineEntry);
    deadlines.remove(entries[3] as DeadlineEntry);
    expect(entries[3]?.deadlineSlot).toBe(-1);
    vi.advanceTimersByTime(1000);
    expect(passed).toEqual(['b', 'c', 'e', 'f']);
  });

  it('arms the timer earlier for a sooner deadline added later', () => {
    const deadlines = new Deadlines();
    const passed: string[] = [];
    deadlines.add(entry('late', passed), 1000);
    deadlines.add(entry('soon', passed), 10);
    vi.advanceTimersByTime(10);
    expect(passed).toEqual(['soon']);
  });

  it('leaves no timer after stop, and tells nobody', () => {
    const deadlines = new Deadlines();
    const passed: string[] = [];
    deadlines.add(entry('a', passed), 100);
    deadlines.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(passed).toEqual([]);
  });
});
