import type { BenchAlgorithm } from '../options/algorithms.js';
import type { MicroProfile } from '../options/profiles.js';
import type { Operation } from './adapters/types.js';
import type { Unsupported } from './tasks.js';

/** One row of the micro table. */
export interface MicroRow {
  readonly algorithm: BenchAlgorithm;
  readonly operation: Operation;
  readonly library: string;
  readonly opsPerSecond: number;
  readonly meanUs: number;
  readonly p99Us: number;
  readonly samples: number;
  readonly rmePercent: number;
  /** Share of the CPUs other processes used meanwhile (see timing.ts); > 5 % marks the row. */
  readonly foreignCpuShare: number;
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
