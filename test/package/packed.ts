/**
 * What the package tests share: `npm pack` of a copy of the sources (so the pack's build
 * writes a dist/ of its own, never the one other test files run the CLI from), and a
 * command runner whose failure carries the command's output.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runStep } from '../../bench/kit/launcher.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

/** A step of these tests that runs locally (npx tsc, node, publint, attw): generous, but bounded. */
export const TIMEOUT_MS = 240_000;

/** `npm pack` of the copy: its `prepack` builds, which takes seconds. */
export const PACK_TIMEOUT_MS = 120_000;

/** `npm install` from the registry, the slow part: bounded below its hook's time so that a hang says what hung. */
export const INSTALL_TIMEOUT_MS = 180_000;

/** The beforeAll that packs and installs: both deadlines and some room, so that either step's own message comes first. */
export const SETUP_TIMEOUT_MS = PACK_TIMEOUT_MS + INSTALL_TIMEOUT_MS + 30_000;

/** What `npm pack` reads: the manifest, the sources its `prepack` builds, and the files it ships. */
const PACKAGE_INPUTS = ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'src', 'proto', 'docs'];
/** docs/tools holds the API reference's own node_modules: not an input. */
const NOT_INPUTS = join('docs', 'tools');

/** What a step is called in its failure, and how long it may take (default {@link TIMEOUT_MS}). */
export interface Step {
  readonly what?: string;
  readonly timeoutMs?: number;
}

/**
 * Runs a command; on failure, an error carrying its output. Past its deadline it is killed
 * with every process it started, and the error names the step that hung.
 */
export function sh(command: string, args: readonly string[], cwd: string, step: Step = {}): Promise<string> {
  return runStep(command, args, { cwd, timeoutMs: step.timeoutMs ?? TIMEOUT_MS, what: step.what });
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
  await sh('npm', ['pack', '--pack-destination', work], source, { what: 'npm pack of a copy of the sources', timeoutMs: PACK_TIMEOUT_MS });
  const tarball = readdirSync(work).find((name) => name.startsWith('jwt-grpc-') && name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no jwt-grpc-*.tgz in ${work}`);
  return join(work, tarball);
}
