import type { BenchAlgorithm } from './algorithms.js';
import type { ProfileName } from './profiles.js';

/** Everything a run needs to know, after parsing and profile defaults. */
export interface BenchOptions {
  readonly profile: ProfileName;
  readonly micro: boolean;
  readonly macro: boolean;
  /** Server names to run; null: all of them. */
  readonly servers: readonly string[] | null;
  /** null: the defaults (all four for micro, HS256 and ES256 for the ghz matrix). */
  readonly algorithms: readonly BenchAlgorithm[] | null;
  /** Substrings; a ghz cell runs when its id contains any of them. null: all cells. */
  readonly cells: readonly string[] | null;
  readonly durationS: number;
  readonly warmupS: number;
  readonly repetitions: number;
  /** Cores of the "N cores" cells; null: 3, or fewer so that ghz keeps a core. */
  readonly serverCores: number | null;
  readonly html: boolean;
  /** Results root; the run writes `<out>/<timestamp>/` and the `<out>/latest` link. */
  readonly out: string;
  /** Also print the summary to stdout at the end (the CLI does; tests may not). */
  readonly printSummary: boolean;
}
