import { existsSync } from 'node:fs';
import { repoPath } from '../kit/paths.js';
import { launch } from '../kit/launcher.js';
import type { BenchAlgorithm } from '../options/algorithms.js';

const CHILD = repoPath('dist', 'bench', 'micro', 'alloc-child.js');
/** Young generation large enough that a measured batch never fills it (see allocation.ts). */
const CHILD_FLAGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];

/** Result of the allocation pass: bytes per operation by task key, or why there are none. */
export type AllocationOutcome =
  | { readonly ok: true; readonly bytesPerOp: ReadonlyMap<string, number | null> }
  | { readonly ok: false; readonly reason: string };

/**
 * Runs the compiled alloc-child.js under the flags it needs and collects its answer. The
 * launcher's clean environment keeps a test runner's NODE_OPTIONS (loaders, inspectors)
 * away from the measuring process.
 */
export async function measureAllocations(algorithms: readonly BenchAlgorithm[], operations: number): Promise<AllocationOutcome> {
  if (!existsSync(CHILD)) return { ok: false, reason: `${CHILD} missing (run npm run build): heap bytes/op not measured` };
  const child = launch(process.execPath, [...CHILD_FLAGS, CHILD], { input: JSON.stringify({ algorithms, operations }) });
  const exit = await child.closed;
  if (exit.code !== 0)
    return { ok: false, reason: `allocation child exited with ${exit.code ?? exit.signal}: ${child.stderr.trim().slice(-4000)}` };
  const parsed = JSON.parse(child.stdout) as Record<string, number | null>;
  return { ok: true, bytesPerOp: new Map(Object.entries(parsed)) };
}
