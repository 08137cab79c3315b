/**
 * A child process that outlives its parent ends itself (src/cli/parent-watch.ts): when the
 * parent pid changes, `onGone` is told and SIGTERM sent to this process, once; a process
 * whose parent is init watches nothing. Only a server that npx (or npm exec) runs watches
 * unasked.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PARENT_CHECK_MS, endWithParent, launchedByNpmExec } from '../../src/cli/parent-watch.js';

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

describe('launchedByNpmExec', () => {
  it.each([
    ["npx jwt-grpc (npm quotes the bin's name)", { npm_lifecycle_event: 'npx', npm_lifecycle_script: "'jwt-grpc'" }],
    ['npm exec -- jwt-grpc, by path', { npm_lifecycle_event: 'npx', npm_lifecycle_script: '/app/node_modules/.bin/jwt-grpc serve' }],
    ['npx on Windows', { npm_lifecycle_event: 'npx', npm_lifecycle_script: 'C:\\app\\node_modules\\.bin\\jwt-grpc.cmd' }],
  ])('%s: yes', (_case, env) => {
    expect(launchedByNpmExec(env)).toBe(true);
  });

  it.each([
    ['a shell npx runs, which then starts the server', { npm_lifecycle_event: 'npx', npm_lifecycle_script: "'bash'" }],
    ['npm run start', { npm_lifecycle_event: 'start', npm_lifecycle_script: 'jwt-grpc serve' }],
    ['no npm at all', {}],
  ])('%s: no', (_case, env) => {
    expect(launchedByNpmExec(env)).toBe(false);
  });
});
