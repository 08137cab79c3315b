/**
 * The ratios of the report, as a table: each comparison names how it picks its two
 * servers from a scenario's column, and every ratio is computed per round (both servers
 * measured in the same round, minutes apart at most) and reported as the median of
 * those per-round ratios with its 95 % bootstrap interval. A new row of the servers
 * table enters a ratio by one entry here.
 */
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import type { CellResult, RatioMetric, RatioResult, RoundResult, ServerStatus } from './results.js';
import type { Scenario } from './scenarios.js';
import type { ServerRole } from './servers.js';

/**
 * `peer`: two servers doing the same JWT work. `ceiling`: a server against the echo of
 * its own gRPC stack (the stack doing no JWT work): how much of the ceiling it reaches,
 * i.e. how much of its call is the stack and how much its own work.
 */
export type ComparisonKind = 'peer' | 'ceiling';

export interface Comparison {
  readonly id: string;
  /** Column heading, e.g. `ours / Go`. */
  readonly label: string;
  readonly kind: ComparisonKind;
  /** The server whose figure is the numerator. */
  subject(server: ServerStatus): boolean;
  /** The denominator, given the subject and the scenario. */
  baseline(server: ServerStatus, subject: ServerStatus, scenario: Scenario): boolean;
}

const role =
  (wanted: ServerRole) =>
  (server: ServerStatus): boolean =>
    server.role === wanted;
const named =
  (name: string) =>
  (server: ServerStatus): boolean =>
    server.name === name;

/**
 * The echo server of the subject's stack, where it is a ceiling: on one core always; on
 * N cores only if it can use them (the Go echo with GOMAXPROCS = N can, the one-process
 * grpc-js echo cannot match an N-process cluster).
 */
function ceilingOf(server: ServerStatus, subject: ServerStatus, scenario: Scenario): boolean {
  return server.role === 'echo' && server.stack === subject.stack && (scenario.serverCores === 1 || server.usesAllCores);
}

export const COMPARISONS: readonly Comparison[] = [
  { id: 'ours-go', label: 'ours / Go', kind: 'peer', subject: role('ours'), baseline: role('go') },
  // The peer a performance-minded user would pick next: tonic + jsonwebtoken (bench/peers/rust).
  { id: 'ours-rust', label: 'ours / Rust', kind: 'peer', subject: role('ours'), baseline: role('rust') },
  { id: 'ours-node-peer', label: 'ours / Node peer', kind: 'peer', subject: role('ours'), baseline: role('node-peer') },
  {
    id: 'ours-grpc-js-transport',
    label: 'ours / ours on grpc-js',
    kind: 'peer',
    subject: role('ours'),
    baseline: named('jwt-grpc-grpc-js'),
  },
  // The transport's promise: the whole service on its own transport against grpc-js doing nothing.
  // Where it is a ceiling at all: on one core (one process cannot match an N-process
  // cluster), and only when ours is on another stack (on grpc-js, `ours / its echo` says it).
  {
    id: 'ours-grpc-js-echo',
    label: 'ours / grpc-js echo',
    kind: 'peer',
    subject: role('ours'),
    baseline: (server, subject, scenario) =>
      server.name === 'grpc-js-echo' && subject.stack !== 'grpc-js' && (scenario.serverCores === 1 || server.usesAllCores),
  },
  // What serve's 4 MiB young generation costs (or saves) against V8's default.
  { id: 'v8-defaults', label: 'ours / V8 defaults', kind: 'peer', subject: role('ours'), baseline: named('jwt-grpc-v8-defaults') },
  // What recording Prometheus metrics on every call costs (docs/metrics-and-logs.md's claim about it).
  { id: 'metrics-cost', label: 'metrics on / off', kind: 'peer', subject: named('jwt-grpc-metrics'), baseline: role('ours') },
  // Whether the gap to Go is the runtime's: the same server on Node and on Bun.
  { id: 'node-bun', label: 'Node / Bun', kind: 'peer', subject: role('ours'), baseline: named('jwt-grpc-bun') },
  // What verifying locally saves a protected service over one VerifyJwt call per call.
  {
    id: 'protected-local-rpc',
    label: 'local verify / VerifyJwt RPC',
    kind: 'peer',
    subject: named('protected-local'),
    baseline: named('protected-rpc'),
  },
  // What an L7 proxy buys over node:cluster: both N processes of ours on the same N cores.
  {
    id: 'nginx-fleet-cluster',
    label: 'replicas+nginx / cluster',
    kind: 'peer',
    subject: named('jwt-grpc-nginx'),
    baseline: named('jwt-grpc-cluster'),
  },
  // What a policy costs on top of mutual TLS: both rows serve mTLS, one checks every GenerateJwt against a policy.
  {
    id: 'mtls-policy',
    label: 'mTLS+policy / mTLS',
    kind: 'peer',
    subject: named('jwt-grpc-mtls-policy'),
    baseline: named('jwt-grpc-mtls'),
  },
  // What tracing costs: a SERVER span per call, every call sampled, then 1 in 100 (OTLP/HTTP export to a sink).
  { id: 'tracing-1', label: 'tracing 1.0 / off', kind: 'peer', subject: named('jwt-grpc-otel-1'), baseline: role('ours') },
  { id: 'tracing-0.01', label: 'tracing 0.01 / off', kind: 'peer', subject: named('jwt-grpc-otel-0.01'), baseline: role('ours') },
  // What 1,000 JWKS GETs a second on the discovery port cost the gRPC calls beside them (the server's CPU for both counts).
  { id: 'jwks-load', label: 'with JWKS load / without', kind: 'peer', subject: named('jwt-grpc-jwks-load'), baseline: role('ours') },
  // What revocation costs (issue 24): a jti in every token, then the set lookup against a pre-loaded set
  // (revocation on / jti): the two parts of revocation on / off.
  { id: 'jti-cost', label: 'jti on / off', kind: 'peer', subject: named('jwt-grpc-jti'), baseline: role('ours') },
  { id: 'revocation-cost', label: 'revocation on / off', kind: 'peer', subject: named('jwt-grpc-revocation'), baseline: role('ours') },
  {
    id: 'revocation-set',
    label: 'revocation on / jti',
    kind: 'peer',
    subject: named('jwt-grpc-revocation'),
    baseline: named('jwt-grpc-jti'),
  },
  // What the reference's sign-then-verify costs: serve's default against `--verify-issued`, which every other row of ours runs.
  { id: 'verify-issued', label: 'default / --verify-issued', kind: 'peer', subject: named('jwt-grpc-default'), baseline: role('ours') },
  // The current code against another commit's build (`--baseline-ref`): e.g. tracing off against the code before tracing.
  {
    id: 'baseline-ref',
    label: 'ours / baseline ref',
    kind: 'peer',
    subject: role('ours'),
    baseline: (server) => server.name.startsWith('jwt-grpc@'),
  },
  { id: 'ours-ceiling', label: 'ours / its echo', kind: 'ceiling', subject: role('ours'), baseline: ceilingOf },
  {
    id: 'grpc-js-transport-ceiling',
    label: 'ours on grpc-js / its echo',
    kind: 'ceiling',
    subject: named('jwt-grpc-grpc-js'),
    baseline: ceilingOf,
  },
  { id: 'go-ceiling', label: 'Go / its echo', kind: 'ceiling', subject: role('go'), baseline: ceilingOf },
];

/** The two servers of a comparison in a column, or null when the column lacks one. */
export function pickPair(
  comparison: Comparison,
  column: readonly ServerStatus[],
  scenario: Scenario,
): { subject: ServerStatus; baseline: ServerStatus } | null {
  const subject = column.find((s) => comparison.subject(s));
  if (subject === undefined) return null;
  const baseline = column.find((s) => s !== subject && comparison.baseline(s, subject, scenario));
  return baseline === undefined ? null : { subject, baseline };
}

/** A round's figure, read so that higher is better: requests/s, or calls per server CPU-second. */
export function metricOf(round: RoundResult, metric: RatioMetric): number {
  return metric === 'rps' ? round.ghz.rpsOk : 1e6 / round.serverCpuUsPerRequest;
}

/** subject / baseline in every round both have a usable figure. */
export function perRoundRatios(subject: CellResult, baseline: CellResult, metric: RatioMetric): { round: number; ratio: number }[] {
  const ratios: { round: number; ratio: number }[] = [];
  for (const s of subject.rounds) {
    const b = baseline.rounds.find((r) => r.round === s.round);
    if (b === undefined) continue;
    const ratio = metricOf(s, metric) / metricOf(b, metric);
    if (Number.isFinite(ratio) && ratio > 0) ratios.push({ round: s.round, ratio });
  }
  return ratios;
}

/** Utilization of its cores below which a server did not set the pace of its cell. */
export const SERVER_PACE_UTILIZATION = 0.9;

/**
 * The metric a verdict is written from. Requests/s measures the server only where the
 * server set the pace: saturated (≥ 90 % of its cores busy in the median round) while
 * ghz was not (never ≥ 90 % busy, ⚑). Elsewhere ghz or the round trip set it (the 1x50
 * cells are half latency-bound), and server CPU per call, which does not depend on the
 * pace, is the figure that compares the servers.
 */
export function headlineMetric(cells: readonly CellResult[]): RatioMetric {
  const serverSetPace = cells.every(
    (c) =>
      c.aggregate !== null &&
      c.aggregate.serverCpuUtilization.median >= SERVER_PACE_UTILIZATION &&
      !c.rounds.some((r) => r.flags.includes('load-bound')),
  );
  return serverSetPace ? 'rps' : 'callsPerCpuSecond';
}

export interface RatioOptions {
  readonly seed: number;
  readonly resamples: number;
  readonly confidence: number;
}

/** Every comparison of every scenario that has both its servers, for both metrics. */
export function computeRatios(
  scenarios: readonly Scenario[],
  servers: readonly ServerStatus[],
  cells: readonly CellResult[],
  options: RatioOptions,
): RatioResult[] {
  const results: RatioResult[] = [];
  for (const scenario of scenarios) {
    const column = servers.filter((s) => cells.some((c) => c.scenario === scenario.id && c.server === s.name && c.rounds.length > 0));
    for (const comparison of COMPARISONS) {
      const pair = pickPair(comparison, column, scenario);
      if (pair === null) continue;
      const subjectCell = cells.find((c) => c.scenario === scenario.id && c.server === pair.subject.name) as CellResult;
      const baselineCell = cells.find((c) => c.scenario === scenario.id && c.server === pair.baseline.name) as CellResult;
      const headline = headlineMetric([subjectCell, baselineCell]);
      for (const metric of ['rps', 'callsPerCpuSecond'] as const) {
        const perRound = perRoundRatios(subjectCell, baselineCell, metric);
        const interval: MedianInterval | null =
          perRound.length === 0
            ? null
            : bootstrapMedian(
                perRound.map((r) => r.ratio),
                seedFor(`${scenario.id}/${comparison.id}/${metric}`, options.seed),
                options.resamples,
                options.confidence,
              );
        results.push({
          scenario: scenario.id,
          comparison: comparison.id,
          subject: pair.subject.name,
          baseline: pair.baseline.name,
          metric,
          perRound,
          interval,
          headline: metric === headline,
        });
      }
    }
  }
  return results;
}
