import type { MachineInfo, Versions } from '../common/machine.js';
import type { MacroResults } from '../ghz/results.js';
import type { MicroResults } from '../micro/results.js';
import type { BenchOptions } from '../options/types.js';

/** The content of results.json: every figure of a run, each repetition included. */
export interface BenchResults {
  readonly schema: 1;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly versions: Versions;
  readonly options: BenchOptions;
  readonly micro: MicroResults | null;
  readonly macro: MacroResults | null;
  readonly notes: readonly string[];
}

/** JSON with NaN/Infinity written as null (JSON has no NaN; a missing figure is null). */
export function serializeResults(results: BenchResults): string {
  return JSON.stringify(results, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2) + '\n';
}
