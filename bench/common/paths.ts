import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root: the nearest directory above this file whose package.json is
 * jwt-grpc's. Found by walking up rather than by a fixed number of `..` because this
 * module runs both from source (bench/common, under vitest) and compiled (dist/bench/common).
 */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown };
      if (parsed.name === 'jwt-grpc') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bench: cannot find the jwt-grpc repository root above ' + import.meta.url);
    dir = parent;
  }
}

export const REPO_ROOT = findRepoRoot();

/** Absolute path of a file given relative to the repository root. */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}

export const PROTO_FILE = repoPath('proto', 'jwt.proto');
export const SUBJECTS_FILE = repoPath('bench', 'fixtures', 'subjects.json');
export const DEFAULT_RESULTS_DIR = repoPath('bench', 'results');
/** Where the harness installs tools it builds (ghz, the HTML renderer); git-ignored. */
export const TOOLS_BIN_DIR = repoPath('.tools', 'bin');
