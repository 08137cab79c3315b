/**
 * `--baseline-ref REF`: another commit of this repository, built in a temporary folder, as
 * the row `jwt-grpc@<short hash>` beside `jwt-grpc`: the current code against the code
 * before a change, in the same run, the rounds paired as every ratio's are.
 *
 * The commit's tree is exported with `git archive` (no worktree is registered, so an
 * interrupted run leaves nothing in the repository to prune) and built with this tree's
 * node_modules linked in: the dependencies of the commit must be the installed ones, which
 * holds for recent commits; a build that fails says so and stops the run before any
 * measurement.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { UsageError } from '../kit/program.js';
import { runCommand } from '../kit/exec.js';

export interface BaselineBuild {
  /** The commit's short hash: the row is `jwt-grpc@<short>`. */
  readonly short: string;
  /** The built CLI, `<dir>/dist/src/bin/jwt-grpc.js`. */
  readonly cli: string;
  /**
   * Whether that CLI has `--no-jti`. A commit from before tokens carried a `jti` has not,
   * and would refuse the flag (exit 2); its tokens carry none anyway, the same work.
   */
  readonly hasJtiFlag: boolean;
  /** Whether that CLI has `--verify-issued`. A commit from before it verifies every token it signs anyway. */
  readonly hasVerifyIssuedFlag: boolean;
  remove(): void;
}

/** Resolves `ref` to a commit, or throws a UsageError naming it. */
export function resolveRef(ref: string, cwd: string = PACKAGE_ROOT): { sha: string; short: string } {
  const sha = runCommand('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd });
  const short = runCommand('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd });
  if (sha.status !== 0 || short.status !== 0) throw new UsageError(`--baseline-ref ${ref}: not a commit of this repository`);
  return { sha: sha.stdout.trim(), short: short.stdout.trim() };
}

/** Exports and builds `ref`; throws with the build's output when it fails. */
export function buildBaseline(ref: string, log: (line: string) => void): BaselineBuild {
  const { sha, short } = resolveRef(ref);
  const dir = mkdtempSync(join(tmpdir(), `jwt-grpc-baseline-${short}-`));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    log(`building jwt-grpc@${short} (${ref}) in a temporary folder`);
    const archive = runCommand('sh', ['-c', `git archive --format=tar ${sha} | tar -x -C "$1"`, 'sh', dir], {
      cwd: PACKAGE_ROOT,
      timeoutMs: 120_000,
    });
    if (archive.status !== 0) throw new Error(`git archive ${sha}: ${archive.stderr.trim()}`);
    symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const build = runCommand('npm', ['run', 'build'], { cwd: dir, timeoutMs: 300_000 });
    if (build.status !== 0) throw new Error(`npm run build of ${ref} failed:\n${`${build.stdout}\n${build.stderr}`.trim().slice(-4000)}`);
    const table = join(dir, 'dist', 'src', 'options', 'table.js');
    const tableText = existsSync(table) ? readFileSync(table, 'utf8') : '';
    const hasJtiFlag = tableText.includes("'no-jti'");
    const hasVerifyIssuedFlag = tableText.includes("'verify-issued'");
    return { short, cli: join(dir, 'dist', 'src', 'bin', 'jwt-grpc.js'), hasJtiFlag, hasVerifyIssuedFlag, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
