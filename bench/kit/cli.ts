/**
 * `jwt-grpc` (the built CLI, `node dist/src/bin/jwt-grpc.js`) as a child process, for the
 * soak and the tests, through the launcher: output kept whole (the secrets test reads
 * every byte), lines awaited, every process of it ended by the launcher's kill strategy.
 * Run `npm run build` first (`npm test` and `npm run soak` do).
 */
import { existsSync } from 'node:fs';
import { repoPath } from './paths.js';
import { type LaunchedProcess, type ProcessExit, type ServerProcess, extend, launch, runToExit, startServer } from './launcher.js';
import { tasksetCommand } from './exec.js';

export const CLI_ENTRY = repoPath('dist', 'src', 'bin', 'jwt-grpc.js');

/** How long to wait for the CLI's banner, or its exit, unless told otherwise: node's start on a busy 2-core machine. */
export const START_TIMEOUT_MS = 20_000;

export interface CliOptions {
  /** Added to the cleaned environment, e.g. `NODEMAXPROCS` (unset: one process) or option twins. */
  readonly env?: Readonly<Record<string, string>>;
  /** Default: the repository root. */
  readonly cwd?: string;
  /** Flags of node itself, before the script (e.g. `--expose-gc`). */
  readonly nodeArgs?: readonly string[];
  /** CPUs to pin the CLI (and so its workers) to; none: unpinned. */
  readonly cpus?: readonly number[];
  /** Default {@link START_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** The open-files limit (soft and hard) to run under, set by util-linux's prlimit; none: inherited. */
  readonly openFiles?: number;
}

/** A serving CLI. */
export interface CliServer extends ServerProcess {
  /** The serving processes of its `workers:` line: the workers, or the CLI's own pid when single. */
  readonly workerPids: readonly number[];
}

/** The cluster primary's log line for each worker it forks: how a worker orphaned by its primary is still found. */
const WORKER_STARTED = /worker (\d+) started/;

/** The whole banner, from `listening on` to its last line (`subjects:`), with the port and the serving pids. */
const BANNER = /jwt-grpc listening on 127\.0\.0\.1:(\d+)\n(?:.*\n)*? {2}workers: .* pids ([\d, ]+)\n(?:.*\n)*? {2}subjects: .*\n/;

/** `serve --host 127.0.0.1 --port 0` plus `extra`. */
export function serveArgs(...extra: string[]): string[] {
  return ['serve', '--host', '127.0.0.1', '--port', '0', ...extra];
}

function cliCommand(argv: readonly string[], options: CliOptions): { command: string; args: string[] } {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} does not exist: run \`npm run build\` first`);
  const node = tasksetCommand(options.cpus ?? [], process.execPath, [...(options.nodeArgs ?? []), CLI_ENTRY, ...argv]);
  // prlimit execs the command: the pid stays the CLI's.
  return options.openFiles === undefined
    ? node
    : { command: 'prlimit', args: [`--nofile=${options.openFiles}:${options.openFiles}`, node.command, ...node.args] };
}

/** Starts the CLI with any argv and returns at once (for runs expected to fail, such as a crash loop). */
export function launchCli(argv: readonly string[], options: CliOptions = {}): LaunchedProcess {
  const { command, args } = cliCommand(argv, options);
  return launch(command, args, { env: options.env ?? {}, cwd: options.cwd, childLine: WORKER_STARTED });
}

/** Starts the CLI (usually with {@link serveArgs}) and resolves once it has printed its whole banner. */
export async function startCli(argv: readonly string[], options: CliOptions = {}): Promise<CliServer> {
  const { command, args } = cliCommand(argv, options);
  const server = await startServer('jwt-grpc serve', command, args, {
    env: options.env ?? {},
    cwd: options.cwd,
    childLine: WORKER_STARTED,
    ready: BANNER,
    timeoutMs: options.timeoutMs ?? START_TIMEOUT_MS,
  });
  const banner = server.stdout.match(BANNER);
  const workerPids = (banner?.[2] ?? '')
    .split(',')
    .map((p) => Number(p.trim()))
    .filter((p) => p > 0);
  return extend(server, { workerPids });
}

/** Runs the CLI to its exit (killing it after `timeoutMs`) and returns its exit and output. */
export async function runCli(argv: readonly string[], options: CliOptions = {}): Promise<ProcessExit & { stdout: string; stderr: string }> {
  const { command, args } = cliCommand(argv, options);
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  const { timedOut, ...run } = await runToExit(command, args, {
    env: options.env ?? {},
    cwd: options.cwd,
    childLine: WORKER_STARTED,
    timeoutMs,
  });
  if (timedOut) {
    throw new Error(
      `jwt-grpc ${argv.join(' ')} did not exit within ${timeoutMs} ms\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`,
    );
  }
  return run;
}
