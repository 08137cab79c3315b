import { findOnPath, runCommand } from './exec.js';

/** Outcome of a `go build`: ok, or a reason the dependent servers are skipped. */
export type BuildOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** How long a `go build` may take by default: a first build fetches its modules from the Go module proxy. */
export const GO_BUILD_TIMEOUT_MS = 600_000;

/**
 * How long a `go build` inside a test may take: less than the 300 s its beforeAll is given,
 * so that a build hung on the module proxy fails saying so rather than as a hook timeout.
 */
export const TEST_GO_BUILD_TIMEOUT_MS = 240_000;

/**
 * Runs `go build -o <output> .` in a module directory. Built once per run, so the
 * binary always matches the sources (Go's build cache makes a rebuild take a second).
 * Killed, with every process it started, after `timeoutMs`.
 */
export function goBuild(moduleDir: string, output: string, what: string, timeoutMs = GO_BUILD_TIMEOUT_MS): BuildOutcome {
  const go = findOnPath('go');
  if (go === null) return { ok: false, reason: `go not found on PATH: ${what} cannot be built (install Go from https://go.dev/dl/)` };
  const result = runCommand(go, ['build', '-o', output, '.'], { cwd: moduleDir, timeoutMs });
  if (result.timedOut)
    return { ok: false, reason: `go build of ${what} did not finish in ${timeoutMs / 1000} s (is the Go module proxy reachable?)` };
  if (result.status !== 0) {
    return { ok: false, reason: `go build of ${what} failed:\n${`${result.stderr}${result.error ?? ''}`.trim().slice(-2000)}` };
  }
  return { ok: true };
}
