import type { FeatureName } from '../macro/features.js';
import type { BenchAlgorithm } from './algorithms.js';
import type { MatrixScope, ProfileName } from './profiles.js';

/** The load sections a run measures (bench/load/): each starts jwt-grpc and the Go peer afresh. */
export interface LoadSelection {
  /** Saturated requests/s under h2load, with ghz on the same server processes (`--h2load`). */
  readonly h2load: boolean;
  /** Latency at fixed arrival rates, open loop (`--open-loop`). */
  readonly openLoop: boolean;
  /**
   * CPU per call at 25/50/80 % of Go's saturated rate, open loop (`--fixed-load`): the
   * open-loop section's fraction-of-Go points alone. `openLoop` includes them.
   */
  readonly fixedLoad: boolean;
  /** CPU per call against warm-up calls on fresh servers, and time to the first OK call (`--warmup-sweep`). */
  readonly warmupSweep: boolean;
  /** gRPC against REST for the same work, on Node and on Rust, under h2load (`--rest`). */
  readonly rest: boolean;
  /** Exec to the first OK call, worker replacement, `token` and the import, beside a bare Node listener and Go (`--startup`). */
  readonly startup: boolean;
}

/** Everything a run needs to know, after parsing and profile defaults. */
export interface BenchOptions {
  readonly profile: ProfileName;
  readonly micro: boolean;
  readonly macro: boolean;
  /** The load sections (profile defaults, `--h2load`, `--open-loop`, `--warmup-sweep`, `--startup`, `--no-load`). */
  readonly load: LoadSelection;
  /** Server names to run; null: the profile's scope. */
  readonly servers: readonly string[] | null;
  /** null: the defaults (all four for micro, HS256 and ES256 for the ghz matrix). */
  readonly algorithms: readonly BenchAlgorithm[] | null;
  /** Substrings; a cell runs when its scenario's id contains any of them. null: the profile's scope. */
  readonly cells: readonly string[] | null;
  /** `--features`: the questions whose rows and cells run (macro/features.ts); `servers` and `cells` then hold their union. null: none named. */
  readonly features: readonly FeatureName[] | null;
  /** Also measure the JWK Set over HTTP at saturation (the `jwks-load` feature). */
  readonly jwksThroughput: boolean;
  /** Also measure RevokeJwt's throughput on each store (the `revocation` feature). */
  readonly revokeThroughput: boolean;
  /** Also measure ES256 GenerateJwt with the key in these backends (the `pkcs11` and `kms` features); empty: not measured. */
  readonly keyBackends: readonly ('pkcs11' | 'kms')[];
  /** `--baseline-ref`: a commit built aside and run as the row `jwt-grpc@<short hash>`; null: none. */
  readonly baselineRef: string | null;
  /** The part of the matrix run when `servers`/`cells` are null (the profile's). */
  readonly scope: MatrixScope;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  /** N of each "N cores" group (`--server-cores 2,4,8`); null: 3, or fewer so that ghz keeps a core. */
  readonly serverCores: readonly number[] | null;
  readonly html: boolean;
  /** A name for the machine, shown in the summary's header (e.g. `16-core bare metal`); null: none. */
  readonly label: string | null;
  /** Results root; the run writes `<out>/<timestamp>/` and the `<out>/latest` link. */
  readonly out: string;
  /** Also print the summary to stdout at the end (the CLI does; tests may not). */
  readonly printSummary: boolean;
}
