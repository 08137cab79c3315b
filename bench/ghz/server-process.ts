import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { processTree, startTicks } from './proc.js';
import type { LaunchCommand } from './servers.js';

/** A started server: its pid (the root of its process tree) and port. */
export interface RunningServer {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** The last lines it wrote to stderr, for error messages. */
  stderrTail(): string;
  /** Whether it has exited by itself (a crash under load). */
  hasExited(): boolean;
  /** SIGTERM, then wait for the exit; SIGKILL to the whole tree after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** The line every server prints on stdout once it accepts calls. */
const LISTENING = /listening on 127\.0\.0\.1:(\d+)/;
const TAIL_BYTES = 4096;

/**
 * Environment variables that would change what a server does behind the harness's back:
 * worker counts, our server's option twins, and NODE_OPTIONS (e.g. a test runner's
 * loader or inspector flags). Each launch sets what it needs explicitly.
 */
function cleanEnvironment(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODEMAXPROCS' || key === 'GOMAXPROCS' || key === 'NODE_OPTIONS' || key.startsWith('JWT_GRPC_')) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Starts a server and resolves once it printed `listening on 127.0.0.1:PORT`. Rejects
 * with its stderr when it exits first or stays silent for `timeoutMs`.
 */
export async function startServer(name: string, launch: LaunchCommand, entryFile: string, timeoutMs = 30_000): Promise<RunningServer> {
  if (!existsSync(entryFile)) {
    throw new Error(`${name}: ${entryFile} does not exist (run \`npm run build\` first; the Go peer is built by the harness)`);
  }
  const child = spawn(launch.command, [...launch.args], { env: cleanEnvironment(launch.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  // Both pipes are drained for the server's whole life: a full pipe would block its writes.
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-TAIL_BYTES);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await waitForListening(name, child, () => stderr, timeoutMs);
  const pid = child.pid as number;
  return {
    name,
    pid,
    port,
    stderrTail: () => stderr,
    hasExited: () => child.exitCode !== null || child.signalCode !== null,
    stop: (graceMs = 15_000) => stopTree(child, pid, exited, graceMs),
  };
}

function waitForListening(name: string, child: ChildProcess, stderr: () => string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const fail = (why: string): void => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`${name}: ${why}\n--- stderr ---\n${stderr().trim() || '(empty)'}\n--- stdout ---\n${stdout.trim().slice(-2000) || '(empty)'}`));
    };
    const onData = (chunk: string): void => {
      stdout = (stdout + chunk).slice(-TAIL_BYTES);
      const match = stdout.match(LISTENING);
      if (match?.[1] !== undefined) {
        cleanup();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      // Give the stderr pipe a moment to deliver the server's last words.
      void setTimeout(() => fail(`exited (${signal ?? `code ${code}`}) before listening`), 50);
    const onError = (error: Error): void => fail(`could not start: ${error.message}`);
    const timer = setTimeout(() => fail(`printed no "listening on 127.0.0.1:PORT" line within ${timeoutMs / 1000} s`), timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

async function stopTree(child: ChildProcess, pid: number, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Listed before SIGTERM: once the primary is gone its orphaned workers are no longer its children.
  const tree = processTree(pid).map((p) => ({ pid: p, started: startTicks(p) }));
  child.kill('SIGTERM');
  const timedOut = await Promise.race([exited.then(() => false), sleep(graceMs).then(() => true)]);
  // After a clean exit only a worker that outlived its primary is left to end; after a
  // timeout, everything. The start time guards against a pid reused in the meantime.
  for (const { pid: p, started } of tree) {
    if ((timedOut || p !== pid) && started !== null && startTicks(p) === started) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // exited in between
      }
    }
  }
  if (timedOut) await exited;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
