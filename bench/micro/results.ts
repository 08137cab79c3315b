import type { BenchAlgorithm } from '../options/algorithms.js';
import type { MicroProfile } from '../options/profiles.js';
import type { Operation } from './adapters/types.js';
import type { Unsupported } from './tasks.js';
import type { TimingResult } from './timing.js';

/** One row of the micro table: a task's timing (a foreign CPU share over 5 % marks the row), and how it compares. */
export interface MicroRow extends TimingResult {
  readonly algorithm: BenchAlgorithm;
  readonly operation: Operation;
  readonly library: string;
  /** Mean time / mean time of the fastest library in the same (algorithm, operation) group: 1 = fastest. */
  readonly timesFastest: number;
  /** V8 heap bytes allocated per operation; null when not measured. */
  readonly heapBytesPerOp: number | null;
}

export interface MicroResults {
  readonly settings: MicroProfile;
  readonly rows: readonly MicroRow[];
  readonly unsupported: readonly Unsupported[];
  readonly notes: readonly string[];
}
