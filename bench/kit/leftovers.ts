/**
 * Processes a test file started and left running: the suite's check that no process
 * outlives its file (setup file `test/setup/leftover-check.ts`, run before every test file).
 *
 * Each test file gets a mark, an environment variable set in its own process before the
 * file runs. Every process the file starts inherits it (the launcher's cleaned environment
 * keeps it, as do execFile and spawn by default), and so do their children and theirs,
 * whatever process group they end up in; so the processes of one file are found by
 * scanning /proc/<pid>/environ for the mark, which no other file's process carries.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { killGroup } from './exec.js';
import { isAlive } from './proc.js';
import { waitUntil } from './wait.js';

/** The variable that marks a test file's processes. Not `JWT_GRPC_*`, which the launcher strips from a child's environment. */
export const MARK_VARIABLE = 'SUITE_TEST_FILE_MARK';

/** How long a process just killed by a file's own teardown may take to go before it counts as left behind. */
export const LEFTOVER_GRACE_MS = 2000;

/** A process that carries a mark. */
export interface Leftover {
  readonly pid: number;
  readonly command: string;
}

/** A fresh mark, unique to one test file of one run. */
export function newMark(): string {
  return randomUUID();
}

/** Every live process (zombies excluded) whose environment carries `mark`, this process excepted. */
export function markedProcesses(mark: string): Leftover[] {
  const needle = `\0${MARK_VARIABLE}=${mark}\0`;
  const found: Leftover[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = readOrNull(`/proc/${entry}/environ`);
    if (environ === null || !`\0${environ}`.includes(needle) || !isAlive(Number(entry))) continue;
    const command = (readOrNull(`/proc/${entry}/cmdline`) ?? '').split('\0').join(' ').trim();
    found.push({ pid: Number(entry), command });
  }
  return found;
}

/**
 * Waits up to `graceMs` for the processes carrying `mark` to go, SIGKILLs those still
 * there (each, and its group), and returns them: empty when the file left nothing behind.
 */
export async function endLeftovers(mark: string, graceMs = LEFTOVER_GRACE_MS): Promise<Leftover[]> {
  let left: Leftover[] = [];
  await waitUntil(() => (left = markedProcesses(mark)).length === 0, graceMs, 50);
  for (const { pid } of left) {
    killGroup(pid);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone in between
    }
  }
  return left;
}

/** The failure that names each leftover process: its pid and command line. */
export function leftoverMessage(file: string, left: readonly Leftover[]): string {
  const lines = left.map(({ pid, command }) => `  pid ${pid}: ${command.length > 300 ? `${command.slice(0, 300)}...` : command}`);
  return `${file} left ${left.length} process(es) running after its last hook (now killed):\n${lines.join('\n')}`;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null; // gone, or another user's
  }
}
