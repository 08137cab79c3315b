/**
 * Short commands run to completion (go build, go install, getconf, openssl, the HTML
 * renderer): the one place, with the launcher (launcher.ts) for processes that run
 * beside the caller, where bench/ and test/ start a child process.
 */
import { type SpawnSyncOptionsWithStringEncoding, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The absolute path of an executable found on PATH, or null. */
export function findOnPath(name: string, pathVariable: string = process.env.PATH ?? ''): string | null {
  for (const dir of pathVariable.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The environment of a program the harness or a test starts: this process's, less what
 * would change that program's behaviour behind the caller's back (worker counts,
 * jwt-grpc's option twins, a test runner's NODE_OPTIONS and VITEST variables, and the
 * NODE_DISABLE_COMPILE_CACHE a coverage run sets, which would turn off the compile cache a
 * user's run keeps), plus
 * `extra`. Whatever a program needs is then set explicitly, in `extra`.
 */
export function childEnvironment(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      key === 'NODEMAXPROCS' ||
      key === 'GOMAXPROCS' ||
      key === 'NODE_OPTIONS' ||
      key === 'NODE_DISABLE_COMPILE_CACHE' ||
      key.startsWith('JWT_GRPC_') ||
      key.startsWith('VITEST')
    )
      continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export interface CommandOptions {
  readonly cwd?: string;
  /** Default: this process's environment (tools such as go need it whole). */
  readonly env?: NodeJS.ProcessEnv;
  /** Killed after this long. Default 30 s. */
  readonly timeoutMs?: number;
  /** Let the command write to this process's stdout and stderr (a long `go install`) instead of capturing them. */
  readonly inheritOutput?: boolean;
}

export interface CommandResult {
  /** The exit status; null when it did not start, was killed or timed out. */
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Why it did not run to an exit status (not found, timed out), else null. */
  readonly error: string | null;
  /** Killed, with its group, because it ran past `timeoutMs`. */
  readonly timedOut: boolean;
}

/**
 * Runs a command to its end and returns its status and output; never throws. The command
 * runs in a process group of its own, and whatever of that group is left when it returns
 * (its timeout kills the command alone; a child it left running) is SIGKILLed.
 */
export function runCommand(command: string, args: readonly string[], options: CommandOptions = {}): CommandResult {
  const timeoutMs = options.timeoutMs ?? 30_000;
  // `detached` works for spawnSync as for spawn (a group of its own), though @types/node omits it.
  const spawnOptions: SpawnSyncOptionsWithStringEncoding & { readonly detached: boolean } = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', options.inheritOutput === true ? 'inherit' : 'pipe', options.inheritOutput === true ? 'inherit' : 'pipe'],
    detached: true,
  };
  const result = spawnSync(command, args, spawnOptions);
  if (result.pid > 0) killGroup(result.pid);
  const timedOut = (result.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  const error = timedOut ? `${command} ${args.join(' ')} did not finish in ${timeoutMs / 1000} s` : (result.error?.message ?? null);
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', error, timedOut };
}

/** Runs a command that must succeed and returns its stdout; throws with its stderr when it does not exit 0. */
export function runChecked(command: string, args: readonly string[], options: CommandOptions = {}): string {
  const result = runCommand(command, args, options);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')}: ${result.error ?? `exit status ${result.status}`}\n${result.stderr}`);
  }
  return result.stdout;
}

/** Runs a short command and returns its trimmed stdout, or null if it failed to run or exited non-zero. */
export function captureOutput(command: string, args: readonly string[], options: CommandOptions = {}): string | null {
  const result = runCommand(command, args, options);
  return result.status === 0 ? result.stdout.trim() : null;
}

/**
 * Sends `signal` (default SIGKILL) to the process group `pgid`: every process of a child
 * started `detached` (its own group, whose id is its pid), the root's descendants included
 * whether or not anyone saw them start. The one way bench/ and test/ end a group. A group
 * with no process left is not an error.
 */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!(pgid > 1)) return; // -0 and -1 would be this process's group and every process
  try {
    process.kill(-pgid, signal);
  } catch {
    // no process left in the group
  }
}

/**
 * `taskset -c <cpus> command args`, or the command alone for no CPUs. taskset execs the
 * command: the pid the caller gets is the command's, and its children inherit the CPUs.
 */
export function tasksetCommand(cpus: readonly number[], command: string, args: readonly string[]): { command: string; args: string[] } {
  if (cpus.length === 0) return { command, args: [...args] };
  return { command: 'taskset', args: ['-c', cpus.join(','), command, ...args] };
}
