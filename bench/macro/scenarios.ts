import { ALGORITHM_SPECS } from '../../src/algorithms/index.js';
import type { RpcMethod } from '../ghz/ghz-args.js';
import type { BenchAlgorithm } from '../options/algorithms.js';

/** Which cores the server gets: one, or the N of the "N cores" scenarios. */
export type CoreGroup = 'single' | 'multi';

/** One column of the macro tables: a method, an algorithm and a load shape. */
export interface Scenario {
  /** Stable id used by --cells and in results.json, e.g. `single-hs256-1x50`, `multi3-es256-15x750`. */
  readonly id: string;
  /** Column heading, e.g. `HS256 1c 1x50`, `ES256 N=3 15x750`. */
  readonly label: string;
  readonly group: CoreGroup;
  /** Server cores of this scenario (1, or N). */
  readonly serverCores: number;
  /** Processes of a cluster server (NODEMAXPROCS) and GOMAXPROCS: N, or 2 when N = 1 (see cores.ts). */
  readonly workers: number;
  readonly method: RpcMethod;
  readonly algorithm: BenchAlgorithm;
  readonly connections: number;
  readonly concurrency: number;
}

/** How a scenario's id and label name its method (GenerateJwt, the matrix's default, goes unnamed). */
const METHOD_IDS: Readonly<Record<RpcMethod, string>> = { GenerateJwt: '', VerifyJwt: 'verify-', Hello: 'protected-' };
const METHOD_LABELS: Readonly<Record<RpcMethod, string>> = { GenerateJwt: '', VerifyJwt: 'Verify ', Hello: 'Protected ' };

function scenario(
  group: CoreGroup,
  serverCores: number,
  workers: number,
  method: RpcMethod,
  algorithm: BenchAlgorithm,
  connections: number,
  concurrency: number,
): Scenario {
  const groupId = group === 'single' ? 'single' : workers === serverCores ? `multi${serverCores}` : `multi${serverCores}w${workers}`;
  const groupLabel = group === 'single' ? '1c' : workers === serverCores ? `N=${serverCores}` : `${workers}w/${serverCores}c`;
  const methodId = METHOD_IDS[method];
  const methodLabel = METHOD_LABELS[method];
  return {
    id: `${groupId}-${methodId}${algorithm.toLowerCase()}-${connections}x${concurrency}`,
    label: `${methodLabel}${algorithm} ${groupLabel} ${connections}x${concurrency}`,
    group,
    serverCores,
    workers,
    method,
    algorithm,
    connections,
    concurrency,
  };
}

/** The cores and workers of one "N cores" group (harness/cores.ts, MultiSplit). */
export interface MultiGroup {
  readonly cores: number;
  readonly workers: number;
}

/**
 * The matrix of the published "JWT over gRPC, Node.js vs Go" comparison (bench/README.md),
 * for the given algorithms: per algorithm, GenerateJwt at
 * (1 connection, 50 in flight) and (5, 250) on one server core, and per "N cores" group
 * (W workers) (W, 50W) and (5W, 250W), plus (1, 50W) when there are several workers;
 * and VerifyJwt of one fixed token at (1, 50) on one core; and, per asymmetric algorithm
 * (a remote verifier has only public keys), a protected service's Hello at (1, 50) on one
 * core, each call carrying a bearer token of that algorithm.
 * Connections scale with the worker count W (= N) because a cluster's primary (jwt-grpc's,
 * node:cluster's) balances connections, not calls: with fewer connections than workers,
 * some workers idle.
 */
export function buildScenarios(algorithms: readonly BenchAlgorithm[], multi: readonly MultiGroup[]): Scenario[] {
  const list: Scenario[] = [];
  for (const alg of algorithms) {
    list.push(scenario('single', 1, 1, 'GenerateJwt', alg, 1, 50), scenario('single', 1, 1, 'GenerateJwt', alg, 5, 250));
  }
  for (const { cores, workers } of multi) {
    for (const alg of algorithms) {
      // With several workers, also one connection carrying the same calls: the primary hands
      // each connection to one worker, so this column shows what a single-channel client gets.
      if (workers > 1) list.push(scenario('multi', cores, workers, 'GenerateJwt', alg, 1, 50 * workers));
      list.push(
        scenario('multi', cores, workers, 'GenerateJwt', alg, workers, 50 * workers),
        scenario('multi', cores, workers, 'GenerateJwt', alg, 5 * workers, 250 * workers),
      );
    }
  }
  for (const alg of algorithms) list.push(scenario('single', 1, 1, 'VerifyJwt', alg, 1, 50));
  for (const alg of algorithms) if (!ALGORITHM_SPECS[alg].symmetric) list.push(scenario('single', 1, 1, 'Hello', alg, 1, 50));
  return list;
}

/** Keeps the scenarios whose id contains one of the filters (all when filters is null). */
export function filterScenarios(scenarios: readonly Scenario[], filters: readonly string[] | null): Scenario[] {
  if (filters === null) return [...scenarios];
  return scenarios.filter((s) => filters.some((f) => s.id.includes(f)));
}

/**
 * The tables' grouping of scenarios: the 1-core ones, and one group per "N cores" split
 * (each its own table, with its own CPUs).
 */
export function tableGroupOf(scenario: Scenario): string {
  return scenario.group === 'single' ? 'single' : `multi-${scenario.serverCores}-${scenario.workers}`;
}

/**
 * One scenario of each kind: GenerateJwt and VerifyJwt on one core, and the W x 50W
 * GenerateJwt of each "N cores" group, the algorithms taken in turn. What the smoke
 * profile runs: every server and code path, in a fraction of the matrix's time.
 */
export function onePerKind(scenarios: readonly Scenario[]): Scenario[] {
  const kinds = new Map<string, Scenario[]>();
  for (const s of scenarios) {
    if (s.group === 'multi' && s.connections !== s.workers) continue;
    const kind = `${tableGroupOf(s)}/${s.method}`;
    kinds.set(kind, [...(kinds.get(kind) ?? []), s]);
  }
  return [...kinds.values()].map((candidates, i) => candidates[i % candidates.length] as Scenario);
}
