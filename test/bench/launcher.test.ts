import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../bench/kit/wait.js';
import { childEnvironment, runCommand } from '../../bench/kit/exec.js';
import { killAll, launch, runStep, startServer } from '../../bench/kit/launcher.js';
import { isAlive, processTree } from '../../bench/kit/proc.js';

/**
 * `sh` that starts a `sleep` from a subshell, so that the sleep is no longer its child
 * (reparented once the subshell exits; as npm's and go's helpers may be) but still in its
 * process group, prints the sleep's pid, and sleeps itself.
 */
const WITH_ESCAPED = '(sleep 31 & echo $!); sleep 30';

/** The escaped sleep's pid, from what WITH_ESCAPED printed. */
function escapedPid(text: string): number {
  const pid = Number(/^(\d+)$/m.exec(text)?.[1]);
  expect(pid, `no pid in: ${text}`).toBeGreaterThan(1);
  return pid;
}

/** `sh` with a background `sleep` and a `wait`: a root with a child, as a cluster primary with a worker. */
const WITH_CHILD = 'sleep 30 & wait';

async function treeOf(root: number): Promise<number[]> {
  expect(await waitUntil(() => processTree(root).length === 2, 5000), 'sh never started its sleep').toBe(true);
  return processTree(root);
}

async function allGone(pids: readonly number[]): Promise<boolean> {
  return waitUntil(() => pids.every((pid) => !isAlive(pid)), 5000);
}

describe.skipIf(process.platform !== 'linux')('launcher', () => {
  afterEach(() => killAll());

  it('kill() ends the process and the processes it started', async () => {
    const child = launch('sh', ['-c', WITH_CHILD]);
    const tree = await treeOf(child.pid);
    child.kill();
    expect(await child.closed).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await allGone(tree), `still running: ${tree.filter(isAlive).join(', ')}`).toBe(true);
  });

  it('kill() ends a process the root started that left its tree: the whole process group goes', async () => {
    const child = launch('sh', ['-c', WITH_ESCAPED]);
    const { match } = await child.waitFor('stdout', /^(\d+)$/m, 5000);
    const escaped = Number(match[1]);
    // Once its subshell has exited, the sleep is no descendant of the root any more.
    expect(await waitUntil(() => !processTree(child.pid).includes(escaped), 5000), 'the sleep left the tree').toBe(true);
    child.kill();
    await child.closed;
    expect(await allGone([escaped]), `the escaped sleep ${escaped} still runs`).toBe(true);
  });

  it('runStep names the step that did not finish in time, and kills its whole group', async () => {
    const step = runStep('sh', ['-c', WITH_ESCAPED], { timeoutMs: 500, what: 'npm install of the packed tarball' });
    const error = await step.then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(error?.message).toMatch(/^npm install of the packed tarball did not finish in 0\.5 s:\n/);
    const escaped = escapedPid(error?.message ?? '');
    expect(await allGone([escaped]), `the escaped sleep ${escaped} still runs`).toBe(true);
  });

  it('runCommand (synchronous) says it timed out, and kills what the command left in its group', async () => {
    const result = runCommand('sh', ['-c', WITH_ESCAPED], { timeoutMs: 500 });
    expect([result.timedOut, result.error]).toEqual([true, `sh -c ${WITH_ESCAPED} did not finish in 0.5 s`]);
    const escaped = escapedPid(result.stdout);
    expect(await allGone([escaped]), `the escaped sleep ${escaped} still runs`).toBe(true);
  });

  it('stop() sends SIGTERM, then kills a worker its root left behind', async () => {
    // SIGTERM ends sh at once; its sleep, never signalled, is orphaned.
    const child = launch('sh', ['-c', WITH_CHILD]);
    const tree = await treeOf(child.pid);
    expect(await child.stop(5000)).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await allGone(tree), `still running: ${tree.filter(isAlive).join(', ')}`).toBe(true);
  });

  it('stop() kills the whole tree when SIGTERM is ignored past the grace period', async () => {
    const child = launch('sh', ['-c', `trap '' TERM; ${WITH_CHILD}`]);
    const tree = await treeOf(child.pid);
    const started = Date.now();
    expect(await child.stop(300)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await allGone(tree), `still running: ${tree.filter(isAlive).join(', ')}`).toBe(true);
  });

  it('pause() stops the whole tree, resume() continues it, and stop() ends a paused tree', async () => {
    const state = (pid: number): string | undefined => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
      } catch {
        return undefined;
      }
    };
    const child = launch('sh', ['-c', WITH_CHILD]);
    const tree = await treeOf(child.pid);
    child.pause();
    expect(await waitUntil(() => tree.every((pid) => state(pid) === 'T'), 5000), `states: ${tree.map(state).join(', ')}`).toBe(true);
    child.resume();
    expect(await waitUntil(() => tree.every((pid) => state(pid) === 'S'), 5000), `states: ${tree.map(state).join(', ')}`).toBe(true);
    child.pause();
    const started = Date.now();
    expect(await child.stop(5000)).toEqual({ code: null, signal: 'SIGTERM' });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await allGone(tree), `still running: ${tree.filter(isAlive).join(', ')}`).toBe(true);
  });

  it('keeps the whole output, feeds stdin, and awaits lines', async () => {
    const child = launch('sh', ['-c', 'cat; echo done >&2'], { input: 'line 1\nline 2\n' });
    const { match } = await child.waitFor('stderr', /(done)/, 5000);
    expect(match[1]).toBe('done');
    expect(await child.closed).toEqual({ code: 0, signal: null });
    expect(child.stdout).toBe('line 1\nline 2\n');
    await expect(child.waitFor('stdout', /never written/, 5000)).rejects.toThrow(/exited \(code 0\) before its stdout matched/);
  });

  it('startServer resolves with the announced port, or rejects with the output of a server that failed', async () => {
    const server = await startServer('fake', 'sh', ['-c', 'echo "listening on 127.0.0.1:4321"; sleep 30']);
    expect(server.port).toBe(4321);
    await expect(startServer('broken', 'sh', ['-c', 'echo "no keys" >&2; exit 3'])).rejects.toThrow(
      /broken did not start: exited \(code 3\)[\s\S]*no keys/,
    );
  });

  it("cleans the environment of what would configure the child behind the caller's back", () => {
    process.env['JWT_GRPC_PORT'] = '1';
    process.env['NODEMAXPROCS'] = '4';
    try {
      const env = childEnvironment({ NODEMAXPROCS: '2' });
      expect(env['JWT_GRPC_PORT']).toBeUndefined();
      expect(env['NODEMAXPROCS']).toBe('2');
      expect(env['NODE_OPTIONS']).toBeUndefined();
      expect(env['PATH']).toBe(process.env['PATH']);
    } finally {
      delete process.env['JWT_GRPC_PORT'];
      delete process.env['NODEMAXPROCS'];
    }
  });
});
