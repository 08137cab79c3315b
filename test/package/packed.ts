/**
 * What the package tests share: `npm pack` of a copy of the sources (so the pack's build
 * writes a dist/ of its own, never the one other test files run the CLI from), and a
 * command runner whose failure carries the command's output.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runToExit } from '../../bench/kit/launcher.js';
import { PACKAGE_ROOT } from '../../src/package-root.js';

/** Installing from the registry is the slow part: generous, but bounded. */
export const TIMEOUT_MS = 240_000;

/** What `npm pack` reads: the manifest, the sources its `prepack` builds, and the files it ships. */
const PACKAGE_INPUTS = ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'src', 'proto', 'docs'];
/** docs/tools holds the API reference's own node_modules: not an input. */
const NOT_INPUTS = join('docs', 'tools');

/** Runs a command; on failure, an error carrying its output. */
export async function sh(command: string, args: readonly string[], cwd: string): Promise<string> {
  const run = await runToExit(command, args, { cwd, timeoutMs: TIMEOUT_MS });
  if (run.code === 0) return run.stdout;
  const how = run.timedOut ? `timed out after ${TIMEOUT_MS} ms` : `exit ${run.code ?? run.signal}`;
  throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (${how}):\n${run.stdout}\n${run.stderr}`);
}

/** Packs a copy of the sources under `work/package`; returns the tarball's path in `work`. */
export async function packCopy(work: string): Promise<string> {
  const source = join(work, 'package');
  mkdirSync(source);
  for (const input of PACKAGE_INPUTS) {
    cpSync(join(PACKAGE_ROOT, input), join(source, input), { recursive: true, filter: (path) => !path.includes(NOT_INPUTS) });
  }
  // The build needs the compiler and the types; the tarball takes nothing from here.
  symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  await sh('npm', ['pack', '--pack-destination', work], source);
  const tarball = readdirSync(work).find((name) => name.startsWith('jwt-grpc-') && name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no jwt-grpc-*.tgz in ${work}`);
  return join(work, tarball);
}
