/** A named set of durations and counts; `--duration`, `--warmup` and `--rounds` override parts of it. */
export interface Profile {
  readonly name: ProfileName;
  /** Seconds of each measured ghz run. */
  readonly durationS: number;
  /** Seconds of the unrecorded ghz run after each server start (0: none). */
  readonly warmupS: number;
  /** Measured runs per cell, interleaved across the servers of a scenario. */
  readonly rounds: number;
  /** The part of the matrix it runs unless --cells, --servers or --server-cores say otherwise. */
  readonly scope: MatrixScope;
  /** Whether ghz's HTML report is rendered per cell (large files: see bench/README.md). */
  readonly html: boolean;
  readonly micro: MicroProfile;
  readonly load: LoadProfile;
}

/** What the load sections (bench/load/) run by default in a profile. */
export interface LoadProfile {
  readonly h2load: boolean;
  readonly openLoop: boolean;
  /** CPU per call at fixed offered load alone (load/fixed-load.ts); the open-loop section includes it. */
  readonly fixedLoad: boolean;
  readonly warmupSweep: boolean;
  /** The REST rows (load/rest-section.ts): gRPC against REST on Node and on Rust. */
  readonly rest: boolean;
  /** The start-up section (bench/load/startup.ts): about a minute on one core. */
  readonly startup: boolean;
  /** Their algorithms unless --algorithms (HS256 and ES256 only). */
  readonly algorithms: readonly ('HS256' | 'ES256')[];
  /** Rounds per offered rate (5: the fewest that give an interval). */
  readonly openLoopRounds: number;
  /** Fresh starts per (server, algorithm, warm-up count); each gives 3 measured rounds. */
  readonly warmupStarts: number;
}

/**
 * - `all`: every scenario and server;
 * - `ratios`: the 1-core scenarios (and the "N cores" ones when --server-cores is given)
 *   with the servers that enter the ratios and the protected rows (no variants);
 * - `one-per-kind`: one scenario of each kind (macro/scenarios.ts, onePerKind), every server.
 */
export type MatrixScope = 'all' | 'ratios' | 'one-per-kind';

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
  // 8-12 minutes on a 2-vCPU VM (7.7 measured for the published run of 2026-11-27 11:39 on a
  // quiet one, about 12 on a busy one; the peers' first build on top): the ratios of the
  // 1-core scenarios, 5 short rounds each
  // (the fewest that give an interval: see common/median-interval.ts).
  quick: {
    name: 'quick',
    durationS: 1.5,
    warmupS: 1,
    rounds: 5,
    scope: 'ratios',
    html: false,
    micro: { timeMs: 400, iterations: 64, warmupMs: 100, allocationOps: 1000 },
    // The h2load cell of HS256 (about 45 s): whether ghz or the server set the pace.
    load: {
      h2load: true,
      openLoop: false,
      fixedLoad: false,
      warmupSweep: false,
      rest: false,
      startup: true,
      algorithms: ['HS256'],
      openLoopRounds: 5,
      warmupStarts: 2,
    },
  },
  // Figures worth quoting: everything, 10 rounds of 5 s after a 2 s warm-up per server start.
  full: {
    name: 'full',
    durationS: 5,
    warmupS: 2,
    rounds: 10,
    scope: 'all',
    html: true,
    micro: { timeMs: 2000, iterations: 256, warmupMs: 500, allocationOps: 4000 },
    load: {
      h2load: true,
      openLoop: true,
      fixedLoad: false,
      warmupSweep: true,
      rest: true,
      startup: true,
      algorithms: ['HS256', 'ES256'],
      openLoopRounds: 5,
      warmupStarts: 2,
    },
  },
  // One scenario of each kind with tiny counts: proves the harness and every server work (CI).
  smoke: {
    name: 'smoke',
    durationS: 0.2,
    warmupS: 0,
    rounds: 5,
    scope: 'one-per-kind',
    html: false,
    micro: { timeMs: 10, iterations: 8, warmupMs: 0, allocationOps: 50 },
    load: {
      h2load: false,
      openLoop: false,
      fixedLoad: false,
      warmupSweep: false,
      rest: false,
      startup: false,
      algorithms: ['HS256'],
      openLoopRounds: 5,
      warmupStarts: 1,
    },
  },
};
