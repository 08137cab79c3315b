import { spawnSync } from 'node:child_process';
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

/** Runs a short command and returns its trimmed stdout, or null if it failed to run or exited non-zero. */
export function captureOutput(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string | null {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000, ...options });
  if (result.error !== undefined || result.status !== 0) return null;
  return result.stdout.trim();
}
