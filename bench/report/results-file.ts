import type { MachineInfo, Versions } from '../common/machine.js';
import type { MacroResults } from '../macro/results.js';
import type { MicroResults } from '../micro/results.js';
import type { BenchOptions } from '../options/types.js';

/**
 * The content of results.json: every figure of a run, each round included.
 * Schema 2: cells hold `rounds` (schema 1: `repetitions`, one server start each), with
 * steal, probe and flags per round; `macro.ratios` holds every ratio per round with its
 * interval; `macro.settings.repetitions` is kept, equal to `rounds`.
 */
export interface BenchResults {
  readonly schema: 2;
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
