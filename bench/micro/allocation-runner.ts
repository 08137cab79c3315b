import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { repoPath } from '../common/paths.js';
import type { BenchAlgorithm } from '../options/algorithms.js';

const CHILD = repoPath('dist', 'bench', 'micro', 'alloc-child.js');
/** Young generation large enough that a measured batch never fills it (see allocation.ts). */
const CHILD_FLAGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];

/** Result of the allocation pass: bytes per operation by task key, or why there are none. */
export type AllocationOutcome =
  | { readonly ok: true; readonly bytesPerOp: ReadonlyMap<string, number | null> }
  | { readonly ok: false; readonly reason: string };

/** Runs the compiled alloc-child.js under the flags it needs and collects its answer. */
export async function measureAllocations(algorithms: readonly BenchAlgorithm[], operations: number): Promise<AllocationOutcome> {
  if (!existsSync(CHILD)) return { ok: false, reason: `${CHILD} missing (run npm run build): heap bytes/op not measured` };
  const child = spawn(process.execPath, [...CHILD_FLAGS, CHILD], { stdio: ['pipe', 'pipe', 'pipe'], env: withoutNodeOptions() });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  child.stdin.end(JSON.stringify({ algorithms, operations }));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) return { ok: false, reason: `allocation child exited with ${code}: ${stderr.trim()}` };
  const parsed = JSON.parse(stdout) as Record<string, number | null>;
  return { ok: true, bytesPerOp: new Map(Object.entries(parsed)) };
}

/** A test runner's NODE_OPTIONS (loaders, inspectors) must not reach the measuring process. */
function withoutNodeOptions(): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  return env;
}
