/** A named set of durations and counts; `--duration` and `--repetitions` override parts of it. */
export interface Profile {
  readonly name: ProfileName;
  /** Seconds of each measured ghz run. */
  readonly durationS: number;
  /** Seconds of the unrecorded ghz run before the measured ones (0: none). */
  readonly warmupS: number;
  readonly repetitions: number;
  /** Whether ghz's HTML report is rendered per cell (large files: see bench/README.md). */
  readonly html: boolean;
  readonly micro: MicroProfile;
}

export interface MicroProfile {
  /** tinybench time budget per task, ms. */
  readonly timeMs: number;
  /** tinybench minimum iterations per task. */
  readonly iterations: number;
  /** tinybench warm-up budget per task, ms (0: no warm-up). */
  readonly warmupMs: number;
  /** Operations per allocation batch (see micro/allocation.ts). */
  readonly allocationOps: number;
}

export type ProfileName = 'quick' | 'full' | 'smoke';

export const PROFILES: Readonly<Record<ProfileName, Profile>> = {
  // Whole run in about 5 minutes on 2 cores: a first look, one repetition.
  quick: {
    name: 'quick',
    durationS: 3,
    warmupS: 1,
    repetitions: 1,
    html: false,
    micro: { timeMs: 400, iterations: 64, warmupMs: 100, allocationOps: 1000 },
  },
  // The reference's 10 s per cell, repeated three times: figures worth quoting.
  full: {
    name: 'full',
    durationS: 10,
    warmupS: 2,
    repetitions: 3,
    html: true,
    micro: { timeMs: 2000, iterations: 256, warmupMs: 500, allocationOps: 4000 },
  },
  // Everything once with tiny counts: proves the harness and every server work (CI).
  smoke: {
    name: 'smoke',
    durationS: 0.4,
    warmupS: 0,
    repetitions: 1,
    html: false,
    micro: { timeMs: 10, iterations: 8, warmupMs: 0, allocationOps: 50 },
  },
};
