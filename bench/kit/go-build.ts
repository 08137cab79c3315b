import { findOnPath, runCommand } from './exec.js';

/** Outcome of a `go build`: ok, or a reason the dependent servers are skipped. */
export type BuildOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Runs `go build -o <output> .` in a module directory. Built once per run, so the
 * binary always matches the sources (Go's build cache makes a rebuild take a second).
 */
export function goBuild(moduleDir: string, output: string, what: string): BuildOutcome {
  const go = findOnPath('go');
  if (go === null) return { ok: false, reason: `go not found on PATH: ${what} cannot be built (install Go from https://go.dev/dl/)` };
  const result = runCommand(go, ['build', '-o', output, '.'], { cwd: moduleDir, timeoutMs: 600_000 });
  if (result.status !== 0) {
    return { ok: false, reason: `go build of ${what} failed:\n${`${result.stderr}${result.error ?? ''}`.trim().slice(-2000)}` };
  }
  return { ok: true };
}
