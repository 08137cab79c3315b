import { findOnPath, runCommand } from './exec.js';
import type { BuildOutcome } from './go-build.js';

/**
 * How long a `cargo build` may take: a cold build of the Rust peer (tonic, axum, aws-lc) is
 * about 2 minutes of CPU (2 min 7 s of wall clock on 2 busy cores, more with the crates to
 * download); a warm one is about a second. 15 minutes leaves a slow machine room.
 */
export const CARGO_BUILD_TIMEOUT_MS = 900_000;

/**
 * Runs `cargo build --release --locked` in a crate directory: built on demand, once per
 * run, so the binary always matches the sources; cargo's target directory (git-ignored)
 * caches it, so a rebuild with nothing changed takes about a second. `--locked`: the
 * committed Cargo.lock is used as it is, never updated (CARGO_NET_OFFLINE=true builds from
 * cargo's local cache alone). A build past `timeoutMs` is killed and the outcome says so.
 */
export function cargoBuild(crateDir: string, what: string, timeoutMs: number = CARGO_BUILD_TIMEOUT_MS): BuildOutcome {
  const cargo = findOnPath('cargo');
  if (cargo === null)
    return { ok: false, reason: `cargo not found on PATH: ${what} cannot be built (install Rust from https://rustup.rs)` };
  const result = runCommand(cargo, ['build', '--release', '--locked', '--quiet'], { cwd: crateDir, timeoutMs });
  if (result.timedOut) {
    return {
      ok: false,
      reason: `cargo build --release of ${what} (in ${crateDir}) did not finish within ${Math.round(timeoutMs / 1000)} s and was killed: the build hung or the machine is too slow`,
    };
  }
  if (result.status !== 0) {
    return {
      ok: false,
      reason: `cargo build --release of ${what} failed:\n${`${result.stderr}${result.error ?? ''}`.trim().slice(-2000)}`,
    };
  }
  return { ok: true };
}
