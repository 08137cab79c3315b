/** Rounds and cells built from a few figures, for the tests of aggregation, ratios and tables. */
import { aggregateRounds, cellFlags, roundFlags } from '../../bench/macro/aggregate.js';
import type { CellResult, RoundResult } from '../../bench/macro/results.js';

export interface RoundFigures {
  readonly rps: number;
  /** Server CPU per request, µs (default 50). */
  readonly cpuUs?: number;
  readonly nonOk?: Record<string, number>;
  readonly load?: number | null;
  readonly foreign?: number;
  readonly steal?: number;
  /** Server CPU utilization (default 1: the server set the pace). */
  readonly utilization?: number;
  readonly probeDeviation?: number | null;
}

export function round(n: number, f: RoundFigures): RoundResult {
  const nonOk = f.nonOk ?? {};
  const nonOkCount = Object.values(nonOk).reduce((a, b) => a + b, 0);
  const measured = {
    round: n,
    startedAtMs: n * 1000,
    ghz: {
      count: 1000,
      okCount: 1000 - nonOkCount,
      nonOkByStatus: nonOk,
      errors: (nonOkCount > 0 ? { 'rpc error: code = Unavailable desc = closed': nonOkCount } : {}) as Record<string, number>,
      totalSeconds: 1,
      rpsOk: f.rps,
      rpsAllResponses: f.rps,
      latencyMs: { mean: 1, p50: 1, p90: 2, p99: f.rps / 1000 },
      endReason: 'timeout',
    },
    serverCpuSeconds: ((f.cpuUs ?? 50) * 1000) / 1e6,
    serverCpuUsPerRequest: f.cpuUs ?? 50,
    serverCpuUtilization: f.utilization ?? 1,
    loadCpuUtilization: f.load === undefined ? 0.5 : f.load,
    ghzCpuSeconds: 0.5,
    foreignCpuShare: f.foreign ?? 0.01,
    serverStealShare: f.steal ?? 0.01,
    stealShare: f.steal ?? 0.01,
    probeMs: { before: [2], after: [2] },
    probeDeviation: f.probeDeviation ?? null,
    reportFile: `round${n}.json`,
  };
  return { ...measured, flags: roundFlags(measured) };
}

/** A cell whose round i has figures[i] (rounds numbered from 1). */
export function cell(server: string, scenario: string, figures: readonly RoundFigures[]): CellResult {
  const rounds = figures.map((f, i) => round(i + 1, f));
  return {
    server,
    scenario,
    rounds,
    aggregate: aggregateRounds(rounds),
    peakRssBytes: 100 * 1024 * 1024,
    htmlReport: null,
    flags: cellFlags(rounds),
    error: null,
  };
}

/** `rps` values as round figures with everything else at its default. */
export const rpsRounds = (...rps: number[]): RoundFigures[] => rps.map((r) => ({ rps: r }));
