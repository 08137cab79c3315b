/**
 * The suite's check that no process outlives its test file (bench/kit/leftovers.ts):
 * it finds a process left running, names it, kills it, and passes a file that left none.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { launch } from '../../bench/kit/launcher.js';
import { isAlive } from '../../bench/kit/proc.js';
import { waitUntil } from '../../bench/kit/wait.js';
import { MARK_VARIABLE, endLeftovers, leftoverMessage, markedProcesses, newMark } from '../../bench/kit/leftovers.js';

const started: number[] = [];
afterAll(() => {
  for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

/** `sleep 60` carrying `mark`, started as a test would (child_process with this process's environment). */
function leakedSleep(mark: string): number {
  const child = spawn('sh', ['-c', 'sleep 60 & wait'], { env: { ...process.env, [MARK_VARIABLE]: mark }, stdio: 'ignore', detached: true });
  child.unref();
  started.push(child.pid as number);
  return child.pid as number;
}

describe('the leftover-process check', () => {
  it('finds a process a file left running, with its child, names them, and kills them', async () => {
    const mark = newMark();
    const pid = leakedSleep(mark);
    expect(await waitUntil(() => markedProcesses(mark).length === 2, 5000), 'the shell and its sleep').toBe(true);
    const left = await endLeftovers(mark, 100);
    expect(left.map((p) => p.pid)).toContain(pid);
    expect(left.map((p) => p.command).sort()).toEqual(['sh -c sleep 60 & wait', 'sleep 60']);
    expect(leftoverMessage('a.test.ts', left)).toMatch(
      /^a\.test\.ts left 2 process\(es\) running after its last hook \(now killed\):\n {2}pid \d+: .*\n {2}pid \d+: /,
    );
    expect(await waitUntil(() => markedProcesses(mark).length === 0, 5000), 'killed').toBe(true);
  });

  it('finds nothing once a file has stopped what it started', async () => {
    const mark = newMark();
    leakedSleep(mark);
    expect(await waitUntil(() => markedProcesses(mark).length === 2, 5000)).toBe(true);
    for (const { pid } of markedProcesses(mark)) process.kill(pid, 'SIGKILL');
    expect(await endLeftovers(mark)).toEqual([]);
  });

  it("marks what the launcher starts: this file's own mark reaches its children", async () => {
    const mark = process.env[MARK_VARIABLE] as string;
    expect(mark).toMatch(/^[0-9a-f-]{36}$/);
    const child = launch('sleep', ['60']);
    try {
      expect(markedProcesses(mark).map((p) => p.pid)).toContain(child.pid);
    } finally {
      child.kill();
      await child.closed;
    }
    expect(await endLeftovers(mark)).toEqual([]);
  });

  it("does not see another mark's processes", async () => {
    const pid = leakedSleep(newMark());
    expect(markedProcesses(newMark())).toEqual([]);
    process.kill(-pid, 'SIGKILL');
  });
});
