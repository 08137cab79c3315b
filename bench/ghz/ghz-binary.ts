import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { findOnPath, isExecutable } from '../common/exec.js';
import { TOOLS_BIN_DIR } from '../common/paths.js';

/** The ghz the harness installs when none is found: pinned for reproducible client behaviour. */
export const GHZ_MODULE = 'github.com/bojand/ghz/cmd/ghz@v0.120.0';
const LOCAL_GHZ = join(TOOLS_BIN_DIR, 'ghz');

export const GHZ_INSTALL_HINT =
  `ghz is needed for the macro benchmarks and was not found on PATH nor at .tools/bin/ghz.\n` +
  `Install it with Go:   GOBIN="$PWD/.tools/bin" go install ${GHZ_MODULE}\n` +
  `or put a release binary (https://github.com/bojand/ghz/releases, v0.120.0) on PATH.`;

/**
 * Finds ghz: on PATH, else `<repo>/.tools/bin/ghz`, else installs it there with
 * `go install`. Throws with install instructions when neither ghz nor go is available.
 */
export function locateGhz(log: (line: string) => void): string {
  const onPath = findOnPath('ghz');
  if (onPath !== null) return onPath;
  if (isExecutable(LOCAL_GHZ)) return LOCAL_GHZ;
  const go = findOnPath('go');
  if (go === null) throw new Error(GHZ_INSTALL_HINT);
  log(`installing ghz: GOBIN=.tools/bin go install ${GHZ_MODULE} (once; needs the Go module proxy)`);
  const result = spawnSync(go, ['install', GHZ_MODULE], {
    env: { ...process.env, GOBIN: TOOLS_BIN_DIR },
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 600_000,
  });
  if (result.status !== 0 || !isExecutable(LOCAL_GHZ)) {
    throw new Error(`go install ${GHZ_MODULE} failed (status ${result.status ?? result.error?.message}).\n${GHZ_INSTALL_HINT}`);
  }
  return LOCAL_GHZ;
}
