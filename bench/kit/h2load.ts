/**
 * h2load, the benchmark's second load generator: found on PATH or in .tools/bin, or
 * installed as a system package where this runs as root with apt-get (`npm run tools`).
 * What to run it with and how to read its output stay with the load sections (bench/load/h2load.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findOnPath, runCommand } from './exec.js';
import { TOOLS_BIN_DIR } from './paths.js';

/** How to install it where the run skips the h2load cells (Debian, Ubuntu: `npm run tools` tries it). */
export const H2LOAD_INSTALL = 'apt-get install nghttp2-client';

/** h2load from PATH, else `.tools/bin/h2load`; null when neither exists. */
export function findH2load(): string | null {
  const local = join(TOOLS_BIN_DIR, 'h2load');
  return findOnPath('h2load') ?? (existsSync(local) ? local : null);
}

/**
 * h2load, installed where it can be: a system package (nghttp2-client), so only as root
 * with apt-get (Debian, Ubuntu, CI images); elsewhere the reason to log, and the h2load
 * cells skip with it. Returns the path, or `{ skip }`.
 */
export function ensureH2load(log: (line: string) => void): string | { skip: string } {
  const found = findH2load();
  if (found !== null) return found;
  const aptGet = findOnPath('apt-get');
  if (aptGet === null || process.getuid?.() !== 0) {
    return {
      skip: `h2load not found; install it with \`${H2LOAD_INSTALL}\` (as root; not done here: ${aptGet === null ? 'no apt-get' : 'not root'})`,
    };
  }
  log(`installing h2load: ${H2LOAD_INSTALL}`);
  const install = (): boolean =>
    runCommand(aptGet, ['install', '-y', '--no-install-recommends', 'nghttp2-client'], { timeoutMs: 300_000 }).status === 0;
  // A fresh image has no package lists yet: update them once, then try again.
  if (!install() && !(runCommand(aptGet, ['update'], { timeoutMs: 300_000 }).status === 0 && install())) {
    return { skip: `\`${H2LOAD_INSTALL}\` failed` };
  }
  return findH2load() ?? { skip: `\`${H2LOAD_INSTALL}\` installed no h2load on PATH` };
}
