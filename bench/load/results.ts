/**
 * The three load sections of results.json (bench/report/results-file.ts): h2load's
 * saturated cells, open-loop latency, and the warm-up / start-up sensitivity. Every
 * `MedianInterval` is the median over rounds with its 95 % percentile-bootstrap interval
 * (bench/common/median-interval.ts; `low`/`high` null below 5 values).
 */
import type { MedianInterval } from '../common/median-interval.js';
import type { StartupRow, StartupSettings } from './startup.js';

/** Which side set the pace of a saturated run: the one ≥ 90 % busy (server first); `neither`: latency-bound or disturbed. */
export type Saturated = 'server' | 'generator' | 'neither';

/** One load generator's figures in one round of an h2load cell. */
export interface GeneratorRound {
  /** OK calls per second (h2load: HTTP 2xx less the status errors; ghz: OK count / its total time). */
  readonly requestsPerS: number;
  /** Calls that did not end OK: for h2load by the server's own counts (bench/load/ok-count.ts), for ghz its status distribution. */
  readonly errors: number;
  /** Server CPU time / wall time of the run (1 core). */
  readonly serverCpu: number;
  /** The generator's CPU time over the middle 60 % of the run / (wall x its CPUs); null for runs too short to sample. */
  readonly generatorCpu: number | null;
  /** Server CPU µs per OK call. */
  readonly cpuPerCallUs: number;
  /** Share of the server's and generator's CPUs other processes used during the run (bench/harness/contention.ts). */
  readonly foreignCpuShare: number;
  /** Steal / all ticks of those CPUs. */
  readonly stealShare: number;
}

export interface H2loadRound {
  readonly round: number;
  readonly h2load: GeneratorRound;
  /** ghz at 5 connections x 250 in flight against the same server process, right after. */
  readonly ghz: GeneratorRound;
}

/** One generator's aggregate over a cell's rounds. */
export interface GeneratorFigures {
  readonly requestsPerS: MedianInterval;
  /** Medians over the rounds. */
  readonly serverCpu: number;
  readonly generatorCpu: number | null;
  readonly cpuPerCallUs: number;
  readonly saturated: Saturated;
  /** Summed over the rounds. */
  readonly errors: number;
  /** Rounds where other processes used > 5 % of the CPUs or steal was > 10 % (the macro's ⊘ and ◐). */
  readonly disturbedRounds: number;
}

/** One server, one algorithm, under h2load and (for comparison) ghz. */
export interface H2loadCell {
  readonly server: string;
  readonly algorithm: string;
  readonly rounds: readonly H2loadRound[];
  /** null when the cell failed before a round. */
  readonly h2load: GeneratorFigures | null;
  /** The ghz figure of the same cell (same server process, same rounds). */
  readonly ghz: GeneratorFigures | null;
  readonly error: string | null;
}

/** ours / Go of one algorithm, per round, as a median with its interval. */
export interface H2loadRatio {
  readonly algorithm: string;
  /** requests/s under h2load, jwt-grpc / go. */
  readonly h2loadRequestsPerS: MedianInterval | null;
  /** requests/s under ghz, jwt-grpc / go. */
  readonly ghzRequestsPerS: MedianInterval | null;
  /** Calls per server CPU-second under h2load, jwt-grpc / go (> 1: ours spends less CPU per call). */
  readonly h2loadCallsPerCpuSecond: MedianInterval | null;
}

export interface H2loadSection {
  /** Why the section did not run (h2load not installed); then `cells` is empty. */
  readonly skipped: string | null;
  readonly settings: {
    readonly threads: number;
    readonly connections: number;
    readonly streamsPerConnection: number;
    readonly ghzConnections: number;
    readonly ghzConcurrency: number;
    readonly durationS: number;
    readonly warmupS: number;
    readonly rounds: number;
    readonly serverCpus: readonly number[];
    readonly loadCpus: readonly number[];
  };
  readonly cells: readonly H2loadCell[];
  readonly ratios: readonly H2loadRatio[];
}

/** One offered rate against one server, over the open-loop rounds. */
export interface OpenLoopPoint {
  readonly server: string;
  readonly algorithm: string;
  /** Calls per second sent on the schedule, whatever the server does. */
  readonly offeredRps: number;
  /** offeredRps / this server's own saturated requests/s, where the point is one of those. */
  readonly fractionOfOwnCapacity?: number;
  /** offeredRps / Go's saturated requests/s, where the point is one of those (the headline's). */
  readonly fractionOfGoCapacity?: number;
  /** Latency of OK calls from their intended send time, ms. */
  readonly p50Ms: MedianInterval | null;
  readonly p99Ms: MedianInterval | null;
  readonly p999Ms: MedianInterval | null;
  /** OK calls per second (median over rounds): below offeredRps when the server could not keep up. */
  readonly achievedRps: number;
  /** Calls not OK (including those cut at the drain limit), summed over the rounds. */
  readonly errors: number;
  readonly rounds: number;
  /** Median CPU busy share of the generator: near 1 means its own lag is in the latencies. */
  readonly generatorCpu: number | null;
  /** Largest delay of a send behind its schedule over the rounds, ms. */
  readonly maxSendLagMs: number;
  /** Server CPU µs per OK call (process tree, /proc, over each run), median over rounds with its interval; absent in runs before it was measured. */
  readonly cpuPerCallUs?: MedianInterval | null;
  /** Median busy share of the server's core over the rounds (CPU time / wall time). */
  readonly serverCpu?: number | null;
  /** Rounds where other processes used > 5 % of the CPUs or steal was > 10 % (the macro's ⊘ and ◐). */
  readonly disturbedRounds?: number;
}

/** p99 and CPU per call ours / Go at one offered rate that both servers received (a fraction of Go's capacity). */
export interface OpenLoopRatio {
  readonly algorithm: string;
  readonly fractionOfGoCapacity: number;
  readonly offeredRps: number;
  /** Per-round p99 jwt-grpc / go: < 1 means ours answers faster at that load. */
  readonly p99Ratio: MedianInterval | null;
  /** Per-round server CPU per call jwt-grpc / go (bench/load/fixed-load.ts): < 1 means ours spends less CPU per call at that load. */
  readonly cpuPerCallRatio?: MedianInterval | null;
}

/** The saturated requests/s each open-loop rate was derived from, and where it came from. */
export interface Capacity {
  readonly server: string;
  readonly algorithm: string;
  readonly requestsPerS: number;
  readonly source: 'h2load' | 'ghz';
}

export interface OpenLoopSettings {
  readonly durationS: number;
  readonly rounds: number;
  readonly connections: number;
  readonly arrivals: 'poisson' | 'uniform';
  readonly fractionsOfOwn: readonly number[];
  readonly fractionsOfGo: readonly number[];
  readonly absoluteRps: readonly number[];
  readonly capacities: readonly Capacity[];
}

/** CPU per call after a given number of warm-up calls on a freshly started server. */
export interface WarmupPoint {
  readonly server: string;
  readonly algorithm: string;
  readonly warmupCalls: number;
  /**
   * Calls per server CPU-second, jwt-grpc / go, per (start, round) pair: the inverse
   * ratio of CPU per call (> 1: ours spends less). Only on jwt-grpc's rows.
   */
  readonly ratioToGo?: MedianInterval;
  /** Median server CPU µs per OK call over every start and round. */
  readonly cpuPerCallUs: number;
  /** Median requests/s of the measured rounds (ghz, closed loop). */
  readonly requestsPerS: number;
  readonly starts: number;
  readonly roundsPerStart: number;
}

/** From spawning the server to its first OK GenerateJwt, over every fresh start of the sweep. */
export interface StartupPoint {
  readonly server: string;
  readonly timeToFirstOkMs: MedianInterval;
}

export interface WarmupSettings {
  readonly warmupCalls: readonly number[];
  readonly starts: number;
  readonly roundsPerStart: number;
  readonly durationS: number;
  readonly connections: number;
  readonly concurrency: number;
}

/** How the load sections ran, and what they noted (skips, failures). */
export interface LoadSettings {
  readonly servers: readonly string[];
  readonly algorithms: readonly string[];
  readonly openLoop: OpenLoopSettings | null;
  readonly warmup: WarmupSettings | null;
  readonly notes: readonly string[];
}

/** Everything the load sections add to results.json; each part null when not run. */
export interface LoadResults {
  readonly h2load: H2loadSection | null;
  readonly openLoop: readonly OpenLoopPoint[] | null;
  readonly openLoopRatios: readonly OpenLoopRatio[] | null;
  readonly warmup: readonly WarmupPoint[] | null;
  readonly startup: readonly StartupPoint[] | null;
  /** The start-up section (`--startup`, bench/load/startup.ts). */
  readonly startupRows: readonly StartupRow[] | null;
  readonly startupSettings: StartupSettings | null;
  readonly loadSettings: LoadSettings | null;
  /** The REST rows (`--rest`); absent or null when not run. */
  readonly rest?: RestSection | null;
}

/** The servers of the REST rows (load/rest-section.ts): the peers, and jwt-grpc by protocol on one port. */
export type RestServerName =
  | 'node-fast-jwt'
  | 'node-rest'
  | 'rust'
  | 'rust-rest'
  | 'jwt-grpc'
  | 'jwt-grpc-connect-h1'
  | 'jwt-grpc-connect-h2';

/** Who serves a REST row: a Node peer, the Rust peer, or this package (`jwt-grpc serve`). */
export type RestStack = 'Node' | 'Rust' | 'jwt-grpc';

/**
 * What a REST row's calls travel as: gRPC (HTTP/2), the peers' `POST /token` (HTTP/1.1
 * keep-alive, JSON), or Connect unary with a JSON body on HTTP/1.1 keep-alive or on HTTP/2.
 */
export type RestProtocol = 'grpc' | 'rest' | 'connect-h1' | 'connect-h2';

/** One server, one algorithm, under h2load: HTTP/2 for gRPC and Connect-h2, `--h1` for REST and Connect-h1. */
export interface RestCell {
  readonly server: RestServerName;
  readonly stack: RestStack;
  readonly protocol: RestProtocol;
  readonly algorithm: string;
  readonly rounds: readonly { readonly round: number; readonly h2load: GeneratorRound }[];
  /** null when the cell failed before a round. */
  readonly h2load: GeneratorFigures | null;
  readonly error: string | null;
}

/** gRPC / REST of one stack and algorithm, per round (> 1: gRPC is the better). */
export interface RestRatio {
  readonly algorithm: string;
  readonly stack: 'Node' | 'Rust';
  readonly grpc: RestServerName;
  readonly rest: RestServerName;
  readonly requestsPerS: MedianInterval | null;
  /** Calls per server CPU-second: > 1 means gRPC spends less CPU per call. */
  readonly callsPerCpuSecond: MedianInterval | null;
}

/**
 * One server's row against another's of the same algorithm, per round (`of` / `to`; > 1:
 * `of` is the better): jwt-grpc's Connect rows against the REST peer and against its own gRPC.
 */
export interface RestPairRatio {
  readonly algorithm: string;
  readonly of: RestServerName;
  readonly to: RestServerName;
  /** The least calls per CPU-second ratio the row is meant to reach (issue 49), or null for none. */
  readonly target: number | null;
  readonly requestsPerS: MedianInterval | null;
  /** Calls per server CPU-second: > 1 means `of` spends less CPU per call. */
  readonly callsPerCpuSecond: MedianInterval | null;
}

export interface RestSection {
  /** Why the section did not run (h2load not installed); then `cells` is empty. */
  readonly skipped: string | null;
  readonly settings: {
    /** Calls in flight for every server: HTTP/2 as grpcConnections x streams, HTTP/1.1 as that many keep-alive connections. */
    readonly inFlight: number;
    readonly grpcConnections: number;
    readonly restConnections: number;
    readonly threads: number;
    readonly durationS: number;
    readonly warmupS: number;
    readonly rounds: number;
    readonly serverCpus: readonly number[];
    readonly loadCpus: readonly number[];
  };
  readonly servers: readonly {
    readonly name: RestServerName;
    readonly stack: RestStack;
    readonly protocol: RestProtocol;
    readonly description: string;
  }[];
  /** Servers left out, with why (the Rust peer did not build). */
  readonly skippedServers: readonly { readonly server: string; readonly reason: string }[];
  readonly cells: readonly RestCell[];
  readonly ratios: readonly RestRatio[];
  /** jwt-grpc's Connect rows against node-rest and against its own gRPC; absent in runs before they were measured. */
  readonly pairs?: readonly RestPairRatio[];
}
