import type { BenchAlgorithm } from '../options/algorithms.js';

/** Which cores the server gets: one, or the N of the "N cores" cells. */
export type CoreGroup = 'single' | 'multi';
export type RpcMethod = 'GenerateJwt' | 'VerifyJwt';

/** One column of the macro tables: a method, an algorithm and a load shape. */
export interface Scenario {
  /** Stable id used by --cells and in results.json, e.g. `single-hs256-1x50`, `multi3-es256-15x750`. */
  readonly id: string;
  /** Column heading, e.g. `HS256 1c 1x50`, `ES256 N=3 15x750`. */
  readonly label: string;
  readonly group: CoreGroup;
  /** Server cores of this cell (1, or N). */
  readonly serverCores: number;
  /** Processes of a cluster server (NODEMAXPROCS) and GOMAXPROCS: N, or 2 when N = 1 (see cores.ts). */
  readonly workers: number;
  readonly method: RpcMethod;
  readonly algorithm: BenchAlgorithm;
  readonly connections: number;
  readonly concurrency: number;
}

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
  const methodId = method === 'VerifyJwt' ? 'verify-' : '';
  const methodLabel = method === 'VerifyJwt' ? 'Verify ' : '';
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

/**
 * The reference's matrix, for the given algorithms: per algorithm, GenerateJwt at
 * (1 connection, 50 in flight) and (5, 250) on one server core, and (N, 50N) and
 * (5N, 250N) on N cores, plus (1, 50N) there when there are several workers; and
 * VerifyJwt of one fixed token at (1, 50) on one core.
 * Connections scale with the worker count W (= N) because node:cluster balances
 * connections, not calls (REFERENCE.md section 4): with fewer connections than workers,
 * some workers idle.
 */
export function buildScenarios(algorithms: readonly BenchAlgorithm[], serverCores: number, workers: number = serverCores): Scenario[] {
  const list: Scenario[] = [];
  for (const alg of algorithms) {
    list.push(scenario('single', 1, 1, 'GenerateJwt', alg, 1, 50), scenario('single', 1, 1, 'GenerateJwt', alg, 5, 250));
  }
  for (const alg of algorithms) {
    // With several workers, also one connection carrying the same calls: node:cluster hands
    // each connection to one worker, so this column shows what a single-channel client gets.
    if (workers > 1) list.push(scenario('multi', serverCores, workers, 'GenerateJwt', alg, 1, 50 * workers));
    list.push(
      scenario('multi', serverCores, workers, 'GenerateJwt', alg, workers, 50 * workers),
      scenario('multi', serverCores, workers, 'GenerateJwt', alg, 5 * workers, 250 * workers),
    );
  }
  for (const alg of algorithms) list.push(scenario('single', 1, 1, 'VerifyJwt', alg, 1, 50));
  return list;
}

/** Keeps the scenarios whose id contains one of the filters (all when filters is null). */
export function filterScenarios(scenarios: readonly Scenario[], filters: readonly string[] | null): Scenario[] {
  if (filters === null) return [...scenarios];
  return scenarios.filter((s) => filters.some((f) => s.id.includes(f)));
}
