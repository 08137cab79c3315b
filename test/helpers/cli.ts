/**
 * Spawns the built CLI (`node dist/src/bin/jwt-grpc.js`), captures its output, waits for
 * lines, and kills whatever is left. Run `npm run build` first (`npm test` does).
 *
 * Each CLI runs in a process group of its own (`detached`), so cleanup can end the CLI
 * and any cluster workers it forked with one signal to that group's id.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/package-root.js';

export const REPO_ROOT = PACKAGE_ROOT;
export const CLI_PATH = join(PACKAGE_ROOT, 'dist', 'src', 'bin', 'jwt-grpc.js');

/** How long to wait for the CLI's announcement unless told otherwise: node startup on a busy 2-core machine. */
export const START_TIMEOUT_MS = 20_000;

export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves once the process has exited and its output is closed. */
  readonly exited: Promise<CliExit>;
  /** The exit, once known. */
  readonly exit: CliExit | undefined;
  /** Resolves to the first match of `pattern` in the stream's output so far or to come. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` to the CLI process itself (not its workers). */
  signal(signal: NodeJS.Signals): void;
}

export interface ServingCli extends CliProcess {
  readonly port: number;
}

const running = new Set<CliProcess>();
/** Process groups started since the last cleanup: workers may outlive their primary. */
const groups = new Set<number>();

/** The environment without anything that configures jwt-grpc, plus `env`. */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('JWT_GRPC_') && name !== 'NODEMAXPROCS'),
  );
  return { ...base, ...env };
}

function describe(cli: { stdout: string; stderr: string }): string {
  const tail = (text: string): string => (text.length > 4000 ? '...' + text.slice(-4000) : text);
  return `\n--- stdout ---\n${tail(cli.stdout)}\n--- stderr ---\n${tail(cli.stderr)}`;
}

/** Spawns the CLI with `args`; the process is tracked for {@link killAllCli}. */
export function spawnCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): CliProcess {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run \`npm run build\` before these tests`);
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: childEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid === undefined) throw new Error('spawn failed: no pid');
  let stdout = '';
  let stderr = '';
  let exit: CliExit | undefined;
  const listeners = new Set<() => void>();
  const notify = (): void => listeners.forEach((listener) => listener());
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  const exited = new Promise<CliExit>((resolve) => {
    child.once('close', (code, signal) => {
      exit = { code, signal };
      running.delete(cli);
      resolve(exit);
      notify();
    });
    child.once('error', (err) => {
      stderr += `\n[spawn error] ${err.message}`;
    });
  });

  const cli: CliProcess = {
    child,
    pid: child.pid,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get exit() {
      return exit;
    },
    exited,
    waitFor(stream, pattern, timeoutMs = START_TIMEOUT_MS) {
      return new Promise<RegExpMatchArray>((resolve, reject) => {
        const check = (): void => {
          const match = (stream === 'stdout' ? stdout : stderr).match(pattern);
          if (match !== null) {
            done();
            resolve(match);
          } else if (exit !== undefined) {
            done();
            reject(new Error(`CLI exited (code ${exit.code}, signal ${exit.signal}) before ${stream} matched ${pattern}${describe(cli)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${stream} to match ${pattern}${describe(cli)}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    signal(signal) {
      if (exit === undefined) child.kill(signal);
    },
  };
  running.add(cli);
  groups.add(cli.pid);
  return cli;
}

/** `serve --host 127.0.0.1 --port 0` plus `extra`. */
export function serveArgs(...extra: string[]): string[] {
  return ['serve', '--host', '127.0.0.1', '--port', '0', ...extra];
}

const LISTENING = /jwt-grpc listening on 127\.0\.0\.1:(\d+)\n/;

/**
 * Spawns the CLI and waits for its announcement (`jwt-grpc listening on 127.0.0.1:PORT`
 * through the `subjects:` line, its last); resolves with the port.
 */
export async function startCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<ServingCli> {
  const cli = spawnCli(args, options);
  const match = await cli.waitFor('stdout', LISTENING, options.timeoutMs);
  await cli.waitFor('stdout', /\n {2}subjects: [^\n]*\n/, options.timeoutMs);
  const port = Number(match[1]);
  return Object.assign(Object.create(cli) as CliProcess, { port }) as ServingCli;
}

/** Runs the CLI to its exit (killing it after `timeoutMs`) and returns its exit and output. */
export async function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliExit & { stdout: string; stderr: string }> {
  const cli = spawnCli(args, options);
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      killGroup(cli);
      reject(new Error(`CLI ${args.join(' ')} did not exit within ${timeoutMs} ms${describe(cli)}`));
    }, timeoutMs);
  });
  try {
    const exit = await Promise.race([cli.exited, timeout]);
    return { ...exit, stdout: cli.stdout, stderr: cli.stderr };
  } finally {
    clearTimeout(timer);
  }
}

function killGroup(cli: CliProcess): void {
  if (cli.exit !== undefined) return;
  try {
    // The CLI leads its own process group (detached): this ends it and any workers it forked.
    process.kill(-cli.pid, 'SIGKILL');
  } catch {
    cli.child.kill('SIGKILL');
  }
}

/** Kills every CLI still running (with its workers) and waits for them to go; for afterEach/afterAll. */
export async function killAllCli(): Promise<void> {
  const left = [...running];
  for (const cli of left) killGroup(cli);
  // Groups whose leader has exited may still hold workers.
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // group already gone
    }
  }
  groups.clear();
  await Promise.all(
    left.map((cli) => Promise.race([cli.exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())])),
  );
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Polls `condition` every `intervalMs` until it holds or `timeoutMs` passes. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
