import type { KeyBackendResults } from '../keys/backends.js';
import type { MedianInterval } from '../common/median-interval.js';
import type { Spread } from '../common/stats.js';
import type { CorePlan } from '../harness/cores.js';
import type { GhzSummary } from '../ghz/ghz-report.js';
import type { OpensslFloor } from '../harness/openssl-floor.js';
import type { ProbeSummary } from '../harness/probe.js';
import type { Scenario } from './scenarios.js';

/** What a round's measurement may have suffered, each shown as a mark (macro/tables.ts). */
export type RoundFlag = 'non-ok' | 'load-bound' | 'contended' | 'stolen' | 'slowed';

/** One measured ghz run of a cell: the cell's share of one round. */
export interface RoundResult {
  /** 1-based; round r of every server of a scenario ran in the same stretch of time. */
  readonly round: number;
  /** ms since the run started, when the measurement began: places it among the probes and other cells. */
  readonly startedAtMs: number;
  readonly ghz: GhzSummary;
  /** Server CPU seconds (user + system, whole process tree) across this run. */
  readonly serverCpuSeconds: number;
  /** Server CPU time per response (OK or not), µs. */
  readonly serverCpuUsPerRequest: number;
  /** Server CPU seconds / (run seconds x server cores): near 1 = the server was saturated. */
  readonly serverCpuUtilization: number;
  /** See GhzRun.loadCpuUtilization. */
  readonly loadCpuUtilization: number | null;
  /** ghz's CPU seconds over the whole run, start-up and report included. */
  readonly ghzCpuSeconds: number;
  /** See RunCpu.foreignCpuShare. */
  readonly foreignCpuShare: number;
  /** See RunCpu.serverStealShare. */
  readonly serverStealShare: number;
  /** See RunCpu.stealShare. */
  readonly stealShare: number;
  /** The speed probe (ms per server CPU) just before this measurement and just after it, every server paused. */
  readonly probeMs: { readonly before: readonly number[]; readonly after: readonly number[] };
  /** The larger |probe / its CPU's median over the run - 1| of the two probes; set once the run is over. */
  readonly probeDeviation: number | null;
  readonly flags: readonly RoundFlag[];
  /** ghz's JSON report without per-call details, relative to the run directory. */
  readonly reportFile: string;
}

/** Median (min-max) over the rounds of a cell. */
export interface CellAggregate {
  readonly rpsOk: Spread;
  readonly meanMs: Spread;
  readonly p50Ms: Spread;
  readonly p90Ms: Spread;
  readonly p99Ms: Spread;
  readonly serverCpuUsPerRequest: Spread;
  readonly serverCpuUtilization: Spread;
  readonly okCount: number;
  readonly nonOkCount: number;
  readonly nonOkByStatus: Readonly<Record<string, number>>;
  readonly maxLoadCpuUtilization: number | null;
  readonly maxForeignCpuShare: number;
  readonly maxStealShare: number;
  readonly maxProbeDeviation: number | null;
  /** Rounds with any of contended, stolen, slowed. */
  readonly disturbedRounds: number;
}

/** Why a cell's figures need a second look; shown as marks in the tables. */
export type CellFlag = RoundFlag | 'server-exited' | 'failed';

/** One (server, scenario) cell. */
export interface CellResult {
  readonly server: string;
  readonly scenario: string;
  readonly rounds: readonly RoundResult[];
  readonly aggregate: CellAggregate | null;
  /** Sum of VmHWM over the server's process tree, read once after its last round: the peak over warm-up and every round. */
  readonly peakRssBytes: number | null;
  readonly htmlReport: string | null;
  readonly flags: readonly CellFlag[];
  readonly error: string | null;
}

export interface ServerStatus {
  readonly name: string;
  readonly label: string;
  readonly role: ServerRole;
  readonly stack: GrpcStack;
  readonly description: string;
  readonly cluster: boolean;
  readonly usesAllCores: boolean;
  /** Why it did not run; null when it ran. */
  readonly skipped: string | null;
}

/** The figure a ratio compares; both read so that > 1 means the subject is better. */
export type RatioMetric = 'rps' | 'callsPerCpuSecond';

/** One comparison in one scenario, per round and as a median with its interval. */
export interface RatioResult {
  readonly scenario: string;
  /** The comparison's id (comparisons.ts). */
  readonly comparison: string;
  readonly subject: string;
  readonly baseline: string;
  readonly metric: RatioMetric;
  /** subject / baseline in each round both measured. */
  readonly perRound: readonly { readonly round: number; readonly ratio: number }[];
  readonly interval: MedianInterval | null;
  /** Whether the verdict uses this metric (see comparisons.ts, headlineMetric). */
  readonly headline: boolean;
}

/** Steal over the whole macro run: the share of the benchmark CPUs' time during measurements. */
export interface StealSummary {
  readonly share: number;
  readonly maxRoundShare: number;
  readonly roundsOverThreshold: number;
  readonly rounds: number;
}

export interface MacroResults {
  readonly settings: {
    readonly durationS: number;
    readonly warmupS: number;
    readonly rounds: number;
    /** The schema-1 name of `rounds`. */
    readonly repetitions: number;
    readonly html: boolean;
    readonly bootstrap: { readonly seed: number; readonly resamples: number; readonly confidence: number };
  };
  readonly ghzPath: string;
  readonly corePlan: CorePlan;
  readonly scenarios: readonly Scenario[];
  readonly servers: readonly ServerStatus[];
  readonly cells: readonly CellResult[];
  readonly ratios: readonly RatioResult[];
  readonly probe: ProbeSummary | null;
  readonly steal: StealSummary | null;
  readonly notes: readonly string[];
  /** The JWK Set over HTTP at saturation (`--features jwks-load`); absent when not measured. */
  readonly jwks?: JwksThroughput;
  /** RevokeJwt's throughput on each store (`--features revocation`); absent when not measured. */
  readonly revoke?: RevokeThroughput;
  /** ES256 GenerateJwt with the key in SoftHSM2 or local-kms against in memory (`--features pkcs11,kms`); absent when not measured. */
  readonly keyBackends?: KeyBackendResults;
  /** OpenSSL's P-256 sign + verify on the server's core (harness/openssl-floor.ts); absent when no ES256 GenerateJwt cell ran on one core. */
  readonly opensslFloor?: OpensslFloor;
}

/**
 * What a server is in the comparisons (comparisons.ts): ours, the Go peer, the Rust peer, the
 * ordinary Node peer, a transport ceiling (a server answering constants), a service protected by
 * the package's consumer side (the protected cells), or a variant of ours that only named
 * comparisons use (a V8 flag, the cache, another transport or runtime). The quick profile
 * runs every role but the variants.
 */
export type ServerRole = 'ours' | 'go' | 'rust' | 'node-peer' | 'echo' | 'protected' | 'variant';

/**
 * The gRPC implementation a server's calls go through. An `echo` server of the same
 * stack is the ceiling of the others: what the stack costs doing no JWT work.
 */
export type GrpcStack = 'grpc-js' | 'grpc-go' | 'tonic' | 'own HTTP/2' | 'Bun, own HTTP/2';

/** Where the revocations go (macro/revoke-throughput.ts). */
export type RevokeStore = 'memory' | 'file' | 'redis';

export interface RevokeRound {
  readonly round: number;
  readonly ok: number;
  readonly nonOk: number;
  readonly durationS: number;
  /** OK answers per second. */
  readonly rps: number;
  /** Latency of the OK answers (ghz's distribution), ms: with the file store, the wait for the fsync. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The server's process tree, CPU-seconds over the run. */
  readonly serverCpuSeconds: number;
  readonly serverCpuUsPerRevocation: number;
  readonly serverCpuUtilization: number;
  /** redis-server's CPU-seconds over the run (the Redis store), else null. */
  readonly storeCpuSeconds: number | null;
  /** Lines the file store appended (the file store), else null: one per OK answer when every jti was new. */
  readonly linesAppended: number | null;
  readonly loadCpuUtilization: number | null;
  readonly foreignCpuShare: number;
}

export interface RevokeStoreResult {
  readonly store: RevokeStore;
  readonly rounds: readonly RevokeRound[];
  readonly rps: MedianInterval | null;
  readonly serverCpuUsPerRevocation: MedianInterval | null;
  /** redis-server's CPU per revocation (µs), the Redis store only. */
  readonly storeCpuUsPerRevocation: MedianInterval | null;
  /** Why the store did not run (redis-server missing), or null. */
  readonly skipped: string | null;
  readonly error: string | null;
}

export interface RevokeThroughput {
  readonly connections: number;
  readonly concurrency: number;
  readonly stores: readonly RevokeStoreResult[];
  /** Whether fsync sets the file store's pace, said from the intervals; null when memory or file lacks figures. */
  readonly fsync: string | null;
}

/** JWKS fetch throughput (macro/jwks-throughput.ts). */
export interface JwksRound {
  readonly round: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly durationS: number;
  readonly rps: number;
  readonly serverCpuSeconds: number;
  readonly serverCpuUtilization: number;
  /** Succeeded requests per server CPU-second: requests/s per core. */
  readonly perCoreRps: number;
  readonly foreignCpuShare: number;
}

export interface JwksThroughput {
  readonly server: string;
  readonly connections: number;
  readonly rounds: readonly JwksRound[];
  readonly rps: MedianInterval | null;
  readonly perCoreRps: MedianInterval | null;
  readonly error: string | null;
}
