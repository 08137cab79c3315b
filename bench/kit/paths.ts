import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

/** Absolute path of a file given relative to the repository root (the package root: src/base/package-root.ts finds it). */
export function repoPath(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}

export const SUBJECTS_FILE = repoPath('bench', 'fixtures', 'subjects.json');
export const DEFAULT_RESULTS_DIR = repoPath('bench', 'results');
/** Where the harness installs tools it builds (ghz, the HTML renderer); git-ignored. */
export const TOOLS_BIN_DIR = repoPath('.tools', 'bin');
