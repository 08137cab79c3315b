/**
 * A child process that outlives its parent ends itself (src/cli/parent-watch.ts): when the
 * parent pid changes, `onGone` is told and SIGTERM sent to this process, once; a process
 * whose parent is init watches nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PARENT_CHECK_MS, endWithParent } from '../../src/cli/parent-watch.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('endWithParent', () => {
  it('tells onGone and sends itself SIGTERM once the parent changes', () => {
    vi.useFakeTimers();
    let ppid = 4242;
    vi.spyOn(process, 'ppid', 'get').mockImplementation(() => ppid);
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    const gone: number[] = [];
    endWithParent((parent) => gone.push(parent));
    vi.advanceTimersByTime(PARENT_CHECK_MS * 3);
    expect(gone).toEqual([]);
    ppid = 1;
    vi.advanceTimersByTime(PARENT_CHECK_MS);
    expect(gone).toEqual([4242]);
    expect(kill).toHaveBeenCalledExactlyOnceWith(process.pid, 'SIGTERM');
    vi.advanceTimersByTime(PARENT_CHECK_MS * 3);
    expect(gone, 'once').toHaveLength(1);
  });

  it('stops watching when asked, and watches nothing under init', () => {
    vi.useFakeTimers();
    let ppid = 4242;
    vi.spyOn(process, 'ppid', 'get').mockImplementation(() => ppid);
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    const stop = endWithParent(() => undefined);
    stop();
    ppid = 1;
    vi.advanceTimersByTime(PARENT_CHECK_MS * 3);
    const underInit = endWithParent(() => undefined);
    ppid = 7;
    vi.advanceTimersByTime(PARENT_CHECK_MS * 3);
    underInit();
    expect(kill).not.toHaveBeenCalled();
  });
});
