/**
 * The one launcher of processes that run beside the caller, for bench/ and test/ alike (the process kit: README.md here): servers under test, ghz, the
 * allocation child, `jwt-grpc serve` in the tests. It keeps every byte a process writes,
 * lets the caller await lines, and ends a process and everything it started in one way:
 *
 * - it knows the process tree: the root, every descendant seen in /proc while the root
 *   runs, and every pid announced on stderr by a line such as jwt-grpc's `worker PID
 *   started` (a worker seen only there is still found once its primary is gone);
 * - each pid is kept with its start time (/proc/<pid>/stat), and a process is signalled
 *   only while its start time still matches, so a pid reused since is never touched;
 * - each process starts in a process group of its own (`detached`), so that everything it
 *   starts, announced or not (npm's and go's own children), is reached by one signal to
 *   the group ({@link killGroup});
 * - `stop` sends SIGTERM to the root, SIGKILLs the whole tree after a grace period, and
 *   after the root's exit SIGKILLs the workers that outlived it (orphans) and the group;
 * - `kill`, `killAll`, and this process's exit SIGKILL the whole tree and group at once;
 * - `pause` and `resume` SIGSTOP and SIGCONT the whole tree, so that a server waiting
 *   for its turn runs nothing at all (no timer, no GC) beside the one being measured.
 *
 * Loopback only: nothing here opens a port; what the processes do is the caller's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { within } from './wait.js';
import { childEnvironment, killGroup } from './exec.js';
import { parentPid, processTree, startTicks } from './proc.js';

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface LaunchOptions {
  /** Added to the cleaned environment ({@link childEnvironment}). */
  readonly env?: Readonly<Record<string, string>>;
  /** Default: the repository root. */
  readonly cwd?: string;
  /** Written to stdin, which is then closed. Without it stdin is empty. */
  readonly input?: string;
  /** A stderr line that names a child process of the root (capture group 1: its pid). */
  readonly childLine?: RegExp;
}

/** A line found in a process's output, and when it arrived (performance.now()). */
export interface OutputMatch {
  readonly match: RegExpMatchArray;
  readonly at: number;
}

export interface LaunchedProcess {
  readonly pid: number;
  /** Everything written so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** The exit once it happened. */
  readonly exit: ProcessExit | undefined;
  /** performance.now() when the exit was seen. */
  readonly exitedAt: number | undefined;
  /** Resolves once the process has exited (its output may still be arriving: see `closed`). */
  readonly exited: Promise<ProcessExit>;
  /** Resolves once the process has exited and its output is complete. */
  readonly closed: Promise<ProcessExit>;
  /**
   * Resolves with the first match of `pattern` in the stream (searched from offset `from`)
   * and the time its chunk arrived; rejects after `timeoutMs`, or once the process has
   * exited without writing it.
   */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs: number, from?: number): Promise<OutputMatch>;
  /** Sends a signal to the root process only (a cluster's primary decides what its workers get). */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM; the whole tree is SIGKILLed after `graceMs` (default 15 s). Resolves with the exit, output complete. */
  stop(graceMs?: number): Promise<ProcessExit>;
  /** SIGKILL to the process and everything it started; idempotent. */
  kill(): void;
  /** SIGSTOP to the process and every descendant now running; `resume` (or `stop`) undoes it. */
  pause(): void;
  /** SIGCONT to the process and its known descendants. */
  resume(): void;
}

/** A started server: a process that announced the port it listens on. */
export interface ServerProcess extends LaunchedProcess {
  readonly port: number;
}

/** How long an exited process's output may stay open (held by an orphaned worker) before it is cut. */
const OUTPUT_CLOSE_MS = 2000;

const launched = new Set<LaunchedProcess>();

// A run cut short (an exception, Ctrl-C, a failed test file) leaves no process behind.
process.once('exit', () => {
  for (const child of launched) child.kill();
});

/** SIGKILLs every process launched here that may still run, with its tree, and waits (5 s at most) for each exit. */
export async function killAll(): Promise<void> {
  const all = [...launched];
  for (const child of all) child.kill();
  await Promise.all(all.map((child) => within(child.closed, 5000)));
}

/** Starts `command args`; throws only when it cannot be started at all. */
export function launch(command: string, args: readonly string[], options: LaunchOptions = {}): LaunchedProcess {
  const child = spawn(command, [...args], {
    cwd: options.cwd ?? PACKAGE_ROOT,
    env: childEnvironment(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    // A group of its own: killGroup reaches every process it starts, even one nobody announced.
    detached: true,
  });
  if (child.pid === undefined) {
    child.once('error', () => undefined); // reported by the throw below
    throw new Error(`cannot start ${command}: not found, not executable, or out of resources`);
  }
  const handle = track(child, child.pid, options.childLine);
  child.stdin?.on('error', () => undefined); // a child that exits without reading its input
  if (options.input !== undefined) child.stdin?.end(options.input);
  return handle;
}

function track(child: ChildProcess, pid: number, childLine: RegExp | undefined): LaunchedProcess {
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  const notify = (): void => listeners.forEach((listener) => listener());
  let exit: ProcessExit | undefined;
  let exitedAt: number | undefined;
  let outputComplete = false;

  // Every process of the tree with its start time (see the module comment).
  const owned = new Map<number, number>();
  const adopt = (p: number): void => {
    const ticks = owned.has(p) ? null : startTicks(p);
    if (ticks !== null) owned.set(p, ticks);
  };
  const remember = (): void => {
    if (exit === undefined) for (const p of processTree(pid)) adopt(p);
  };
  adopt(pid);
  let scanned = 0;
  const scanForChildren = (): void => {
    if (childLine === undefined) return;
    const end = output.stderr.lastIndexOf('\n') + 1;
    for (const m of output.stderr.slice(scanned, end).matchAll(new RegExp(childLine, 'g'))) {
      const announced = Number(m[1]);
      if (parentPid(announced) === pid) adopt(announced);
    }
    scanned = Math.max(scanned, end);
  };

  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
    notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
    scanForChildren();
    notify();
  });
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      exitedAt = performance.now();
      // Workers inherit the output pipes: one that outlives its primary would keep them open.
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, OUTPUT_CLOSE_MS).unref();
      resolve(exit);
    });
  });
  const closed = new Promise<ProcessExit>((resolve) => {
    child.once('close', (code, signal) => {
      outputComplete = true;
      exit ??= { code, signal };
      exitedAt ??= performance.now();
      // Kept for killAll while a known descendant outlives it (an orphaned worker).
      if (![...owned].some(([p, ticks]) => startTicks(p) === ticks)) launched.delete(handle);
      notify();
      resolve(exit);
    });
  });

  const signalOwned = (signal: NodeJS.Signals, includeRoot: boolean): void => {
    for (const [p, ticks] of owned) {
      if ((!includeRoot && p === pid) || startTicks(p) !== ticks) continue; // gone, or the pid is someone else's now
      try {
        process.kill(p, signal);
      } catch {
        // exited in between
      }
    }
  };
  const killOwned = (includeRoot: boolean): void => {
    signalOwned('SIGKILL', includeRoot);
    killGroup(pid);
  };

  const handle: LaunchedProcess = {
    pid,
    get stdout() {
      return output.stdout;
    },
    get stderr() {
      return output.stderr;
    },
    get exit() {
      return exit;
    },
    get exitedAt() {
      return exitedAt;
    },
    exited,
    closed,
    waitFor(stream, pattern, timeoutMs, from = 0) {
      return new Promise<OutputMatch>((resolve, reject) => {
        const check = (): void => {
          const match = output[stream].slice(from).match(pattern);
          if (match !== null) {
            done();
            resolve({ match, at: performance.now() });
          } else if (outputComplete) {
            done();
            reject(new Error(`exited (${describeExit(exit)}) before its ${stream} matched ${pattern}${describeOutput(output)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`its ${stream} did not match ${pattern} within ${timeoutMs} ms${describeOutput(output)}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        // Checked on every chunk, so that the time of a match is the time it arrived.
        listeners.add(check);
        check();
      });
    },
    signal(signal) {
      if (exit === undefined) child.kill(signal);
    },
    async stop(graceMs = 15_000) {
      if (exit === undefined) {
        // Listed before SIGTERM: once the primary is gone its workers are no longer its children.
        remember();
        signalOwned('SIGCONT', true); // a paused tree would hold SIGTERM pending
        child.kill('SIGTERM');
        if ((await within(exited, graceMs)) === undefined) killOwned(true);
        await exited;
      }
      killOwned(false); // workers that outlived their primary, if any
      return closed;
    },
    kill() {
      remember();
      killOwned(true);
    },
    pause() {
      if (exit !== undefined) return;
      remember();
      signalOwned('SIGSTOP', true);
      killGroup(pid, 'SIGSTOP');
    },
    resume() {
      signalOwned('SIGCONT', true);
      killGroup(pid, 'SIGCONT');
    },
  };
  launched.add(handle);
  return handle;
}

/** How a command run to its exit ended, with all it wrote. */
export interface CommandRun extends ProcessExit {
  readonly stdout: string;
  readonly stderr: string;
  /** Killed (with its tree) because it ran past its time. */
  readonly timedOut: boolean;
}

/**
 * Runs `command args` to its exit without blocking this process (a server under test in
 * this process keeps answering the command's calls), killing its tree after `timeoutMs`.
 */
export async function runToExit(
  command: string,
  args: readonly string[],
  options: LaunchOptions & { readonly timeoutMs: number },
): Promise<CommandRun> {
  const child = launch(command, args, options);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill();
  }, options.timeoutMs);
  const exit = await child.closed;
  clearTimeout(timer);
  return { ...exit, stdout: child.stdout, stderr: child.stderr, timedOut };
}

/**
 * Runs `command args` to its exit as {@link runToExit} does and returns its stdout; throws
 * when it does not exit 0, naming the step (`what`, default the command line): "`what` did
 * not finish in N s" when it ran past `timeoutMs` (its tree and group killed), else its exit,
 * with its output either way.
 */
export async function runStep(
  command: string,
  args: readonly string[],
  options: LaunchOptions & { readonly timeoutMs: number; readonly what?: string },
): Promise<string> {
  const run = await runToExit(command, args, options);
  if (run.code === 0) return run.stdout;
  const what = options.what ?? `${command} ${args.join(' ')}`;
  const how = run.timedOut ? `did not finish in ${options.timeoutMs / 1000} s` : `failed (exit ${run.code ?? run.signal})`;
  throw new Error(`${what} ${how}${options.cwd === undefined ? '' : `, in ${options.cwd}`}:\n${run.stdout}\n${run.stderr}`);
}

/** The line every server under test prints on stdout once it accepts calls. */
export const LISTENING = /listening on 127\.0\.0\.1:(\d+)/;

/**
 * Starts a server and resolves once its stdout matches `ready` (default {@link LISTENING};
 * group 1: the port). If it exits first or stays silent for `timeoutMs`, its tree is
 * killed and the promise rejects with its output.
 */
export async function startServer(
  name: string,
  command: string,
  args: readonly string[],
  options: LaunchOptions & { readonly ready?: RegExp; readonly timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const server = launch(command, args, options);
  try {
    const { match } = await server.waitFor('stdout', options.ready ?? LISTENING, options.timeoutMs ?? 30_000);
    return extend(server, { port: Number(match[1]) });
  } catch (error) {
    server.kill();
    throw new Error(`${name} did not start: ${(error as Error).message}`);
  }
}

/** `base` with more fields; its getters (output, exit) stay live, which a spread copy would freeze. */
export function extend<T extends object, F extends object>(base: T, fields: F): T & F {
  return Object.assign(Object.create(base) as T, fields);
}

function describeExit(exit: ProcessExit | undefined): string {
  return exit?.signal ?? `code ${exit?.code ?? 'unknown'}`;
}

function describeOutput(output: { stdout: string; stderr: string }): string {
  const tail = (text: string): string => (text.trim() === '' ? '(empty)' : text.length > 4000 ? '...' + text.slice(-4000) : text.trimEnd());
  return `\n--- stderr ---\n${tail(output.stderr)}\n--- stdout ---\n${tail(output.stdout)}`;
}
