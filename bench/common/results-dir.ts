import { mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The directory name of a run: its start time in UTC, e.g. `2026-11-22T02-10-00Z`
 * (colons are not portable in file names; milliseconds are dropped).
 */
export function runTimestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replaceAll(':', '-');
}

/** Creates `<outDir>/<timestamp>/` (with a suffix if two runs start in the same second). */
export function createRunDir(outDir: string, date: Date): string {
  mkdirSync(outDir, { recursive: true });
  const base = runTimestamp(date);
  for (let attempt = 0; ; attempt++) {
    const name = attempt === 0 ? base : `${base}-${attempt}`;
    const dir = join(outDir, name);
    try {
      mkdirSync(dir);
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/**
 * Points `<outDir>/latest` at the run directory, replacing an older link atomically
 * (a new link under a temporary name, renamed over the old one). The target is
 * relative so that the results folder can be moved or copied as a whole.
 */
export function updateLatestLink(outDir: string, runDirName: string): void {
  const temporary = join(outDir, `.latest-${process.pid}`);
  rmSync(temporary, { force: true });
  symlinkSync(runDirName, temporary);
  renameSync(temporary, join(outDir, 'latest'));
}
