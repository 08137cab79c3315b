import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { repoPath } from '../common/paths.js';
import { parentPid, processTree, startTicks } from '../ghz/proc.js';

/**
 * `jwt-grpc serve` as a child process, for the reliability tests and the soak: its
 * whole stdout and stderr are kept (the secrets test reads every byte of them), its
 * log lines can be awaited, and every server started here is killed, workers included,
 * by {@link killAllCliServers} (tests call it in afterEach/afterAll) or at the latest
 * when this process exits.
 */

export const CLI_ENTRY = repoPath('dist', 'src', 'bin', 'jwt-grpc.js');

export interface CliServerOptions {
  /** NODEMAXPROCS; 1 = single process. */
  readonly workers?: number;
  /** Default 0: any free port. */
  readonly port?: number;
  readonly keysFile?: string;
  readonly graceMs?: number;
  /** More `serve` flags. */
  readonly args?: readonly string[];
  /** CPUs to pin the server to with `taskset -c` (which execs node: same pid); none = unpinned. */
  readonly cpus?: readonly number[];
  /** Flags of node itself, before the script (e.g. `--expose-gc`). */
  readonly nodeArgs?: readonly string[];
  /** How long to wait for the `listening on` line. Default 30 s. */
  readonly startTimeoutMs?: number;
}

export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** performance.now() when the exit was seen. */
  readonly at: number;
}

export interface CliServer {
  /** The CLI's pid: the server (single) or the primary (cluster). */
  readonly pid: number;
  readonly port: number;
  /** The pids of the `workers:` line (the CLI's own pid when single). */
  readonly workerPids: readonly number[];
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<CliExit>;
  /** The exit once it happened, else null. */
  exit(): CliExit | null;
  /**
   * Resolves with the first match of `pattern` in stderr (searched from `fromOffset`)
   * and when it was seen; rejects after `timeoutMs` or when the process exits without it.
   */
  waitForStderr(pattern: RegExp, timeoutMs: number, fromOffset?: number): Promise<{ match: RegExpMatchArray; at: number }>;
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL to the whole tree after `graceMs`; resolves once the CLI has exited. */
  stop(graceMs?: number): Promise<CliExit>;
  /** SIGKILL to the CLI and every process under it; idempotent. */
  killTree(): void;
}

export interface StartedCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<CliExit>;
}

const running = new Set<{ killTree(): void }>();

process.once('exit', () => killAllCliServers());

/** SIGKILLs every server this module started that may still run (and their workers). */
export function killAllCliServers(): void {
  for (const server of running) server.killTree();
  running.clear();
}

/**
 * The environment of a started CLI: ours minus whatever would change what it does
 * behind the test's back (a test runner's NODE_OPTIONS, worker counts, option twins).
 */
function cliEnvironment(workers: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODEMAXPROCS' || key === 'NODE_OPTIONS' || key.startsWith('JWT_GRPC_') || key.startsWith('VITEST')) continue;
    env[key] = value;
  }
  env['NODEMAXPROCS'] = String(workers);
  return env;
}

/**
 * Spawns the CLI with any argv and keeps its output; resolves at once, without waiting
 * for it to listen (for runs that are expected to fail, such as a crash loop).
 */
export function spawnCli(
  argv: readonly string[],
  options: { workers?: number; cpus?: readonly number[]; nodeArgs?: readonly string[] } = {},
): StartedCli & CliServerHandle {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} does not exist: run \`npm run build\` first`);
  const nodeArgs = [...(options.nodeArgs ?? []), CLI_ENTRY, ...argv];
  const [command, args] =
    options.cpus === undefined || options.cpus.length === 0
      ? [process.execPath, nodeArgs]
      : ['taskset', ['-c', options.cpus.join(','), process.execPath, ...nodeArgs]];
  const child = spawn(command, args, { env: cliEnvironment(options.workers ?? 1), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exit: CliExit | null = null;
  // Every process of this CLI, with its start time: the CLI, and each worker as soon as
  // it is seen (in the tree, or in a `worker PID started` line while it is still the
  // CLI's child). Killing checks the start time again, so a pid reused since by some
  // other process is never touched; orphaned workers (primary gone) are still found.
  const owned = new Map<number, number>();
  const adopt = (pid: number): void => {
    if (owned.has(pid) || child.pid === undefined) return;
    if (pid !== child.pid && parentPid(pid) !== child.pid) return;
    const ticks = startTicks(pid);
    if (ticks !== null) owned.set(pid, ticks);
  };
  let scanned = 0;
  const scanLog = (): void => {
    const end = stderr.lastIndexOf('\n') + 1;
    for (const m of stderr.slice(scanned, end).matchAll(/worker (\d+) started/g)) adopt(Number(m[1]));
    scanned = Math.max(scanned, end);
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    scanLog();
  });
  if (child.pid !== undefined) adopt(child.pid);
  const exited = new Promise<CliExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal, at: performance.now() };
      resolve(exit);
    });
    child.once('error', () => {
      exit = { code: null, signal: null, at: performance.now() };
      resolve(exit);
    });
  });
  const remember = (): void => {
    if (child.pid !== undefined && exit === null) for (const pid of processTree(child.pid)) adopt(pid);
  };
  const handle: CliServerHandle = {
    remember,
    killTree: () => {
      remember();
      for (const [pid, ticks] of owned) {
        if (startTicks(pid) !== ticks) continue; // gone (or the pid now belongs to someone else)
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // exited in between
        }
      }
      running.delete(handle);
    },
  };
  running.add(handle);
  return { child, stdout: () => stdout, stderr: () => stderr, exited, ...handle };
}

interface CliServerHandle {
  /** Records the current process tree (for killing orphans later). */
  remember(): void;
  killTree(): void;
}

/** Starts `jwt-grpc serve --host 127.0.0.1` and resolves once it printed its `listening on` banner. */
export async function startCliServer(options: CliServerOptions = {}): Promise<CliServer> {
  const workers = options.workers ?? 1;
  const argv = [
    'serve',
    '--host', '127.0.0.1',
    '--port', String(options.port ?? 0),
    ...(options.keysFile === undefined ? [] : ['--keys', options.keysFile]),
    ...(options.graceMs === undefined ? [] : ['--grace-ms', String(options.graceMs)]),
    ...(options.args ?? []),
  ];
  const cli = spawnCli(argv, { workers, cpus: options.cpus ?? [], nodeArgs: options.nodeArgs ?? [] });
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const banner = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const match = cli.stdout().match(/listening on 127\.0\.0\.1:(\d+)\n[\s\S]*?workers: .*?pids ([\d, ]+)\n/);
      if (match !== null) {
        clearInterval(poll);
        resolve(match);
      } else if (cli.child.exitCode !== null || cli.child.signalCode !== null || Date.now() - started > timeoutMs) {
        clearInterval(poll);
        cli.killTree();
        reject(new Error(`jwt-grpc serve did not start (${cli.child.exitCode ?? cli.child.signalCode ?? 'timeout'})\n--- stderr ---\n${cli.stderr()}\n--- stdout ---\n${cli.stdout()}`));
      }
    }, 10);
  });
  cli.remember();
  const port = Number(banner[1]);
  const workerPids = (banner[2] ?? '').split(',').map((p) => Number(p.trim())).filter((p) => p > 0);
  const pid = cli.child.pid as number;

  let exit: CliExit | null = null;
  void cli.exited.then((e) => (exit = e));

  const waitForStderr = (pattern: RegExp, timeoutMs: number, fromOffset = 0): Promise<{ match: RegExpMatchArray; at: number }> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const check = (): boolean => {
        const match = cli.stderr().slice(fromOffset).match(pattern);
        if (match !== null) {
          resolve({ match, at: performance.now() });
          return true;
        }
        return false;
      };
      if (check()) return;
      const onData = (): void => {
        if (check()) cleanup();
      };
      const timer = setInterval(() => {
        if (check()) cleanup();
        else if (exit !== null || performance.now() - started > timeoutMs) {
          cleanup();
          reject(new Error(`no ${pattern} in the server's stderr within ${timeoutMs} ms${exit === null ? '' : ' (it exited)'}:\n${cli.stderr()}`));
        }
      }, 25);
      const cleanup = (): void => {
        clearInterval(timer);
        cli.child.stderr?.off('data', onData);
      };
      // Checked on every chunk, so that the time of the match is the time it arrived.
      cli.child.stderr?.on('data', onData);
    });

  return {
    pid,
    port,
    workerPids,
    stdout: cli.stdout,
    stderr: cli.stderr,
    exited: cli.exited,
    exit: () => exit,
    waitForStderr,
    signal: (signal) => {
      if (exit === null) cli.child.kill(signal);
    },
    stop: async (graceMs = 15_000) => {
      cli.remember();
      if (exit === null) cli.child.kill('SIGTERM');
      const timer = setTimeout(() => cli.killTree(), graceMs);
      const result = await cli.exited;
      clearTimeout(timer);
      cli.killTree(); // workers that outlived their primary, if any
      return result;
    },
    killTree: cli.killTree,
  };
}
