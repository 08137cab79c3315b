import { describe, expect, it } from 'vitest';
import { aggregateRepetitions, flagsOf } from '../../bench/ghz/aggregate.js';
import { planCores } from '../../bench/ghz/cores.js';
import type { CellResult, MacroResults, RepetitionResult } from '../../bench/ghz/results.js';
import { buildScenarios } from '../../bench/ghz/scenarios.js';
import { macroSummary } from '../../bench/ghz/tables.js';

function repetitions(rps: readonly number[], nonOk: Record<string, number> = {}): RepetitionResult[] {
  return rps.map((rpsOk, i) => ({
    repetition: i + 1,
    ghz: {
      count: 100,
      okCount: i === 0 ? 100 - Object.values(nonOk).reduce((a, b) => a + b, 0) : 100,
      nonOkByStatus: i === 0 ? nonOk : {},
      errors: (i === 0 && Object.keys(nonOk).length > 0 ? { 'rpc error: code = Unavailable desc = closed': 1 } : {}) as Record<string, number>,
      totalSeconds: 1,
      rpsOk,
      rpsAllResponses: rpsOk,
      latencyMs: { mean: 1, p50: 1, p90: 2, p99: 2.75 },
      endReason: 'timeout',
    },
    serverCpuSeconds: 1,
    serverCpuUsPerRequest: 25,
    serverCpuUtilization: 1,
    loadCpuUtilization: 0.5,
    ghzCpuSeconds: 0.5,
    foreignCpuShare: 0,
    reportFile: 'x.json',
  }));
}

function cell(server: string, scenario: string, rps: readonly number[], nonOk: Record<string, number> = {}): CellResult {
  const reps = repetitions(rps, nonOk);
  const aggregate = aggregateRepetitions(reps);
  return { server, scenario, repetitions: reps, aggregate, peakRssBytes: 100 * 1024 * 1024, htmlReport: null, flags: flagsOf(aggregate), error: null };
}

const scenarios = buildScenarios(['HS256'], 1).filter((s) => s.id === 'single-hs256-1x50');
const results: MacroResults = {
  settings: { durationS: 10, warmupS: 2, repetitions: 3, html: false },
  ghzPath: 'ghz',
  corePlan: planCores(null, [0, 1], true),
  scenarios,
  servers: [
    { name: 'jwt-grpc', role: 'ours', description: '', cluster: false, skipped: null },
    { name: 'go', role: 'go', description: '', cluster: false, skipped: null },
    { name: 'node-fast-jwt', role: 'node-peer', description: '', cluster: false, skipped: null },
    { name: 'grpc-js-echo', role: 'echo', description: '', cluster: false, skipped: null },
  ],
  cells: [
    cell('jwt-grpc', 'single-hs256-1x50', [20_000, 19_000, 21_000]),
    cell('go', 'single-hs256-1x50', [40_000, 40_000, 40_000], { Unavailable: 1 }),
    cell('node-fast-jwt', 'single-hs256-1x50', [10_000, 10_000, 10_000]),
    cell('grpc-js-echo', 'single-hs256-1x50', [25_000, 25_000, 25_000]),
  ],
  notes: [],
};

describe('macroSummary', () => {
  const text = macroSummary(results);

  it('shows median (min-max) per server and scenario', () => {
    expect(text).toContain('| **jwt-grpc** | 20,000 (19,000-21,000) |');
    expect(text).toContain('| node-fast-jwt | 10,000 |');
  });

  it('marks a cell with non-OK responses and lists them', () => {
    expect(text).toContain('| go | 40,000 ⚠ |');
    expect(text).toMatch(/go single-hs256-1x50: Unavailable 1 of 300/);
  });

  it('computes ours/Go, ours/Node peer and ours/echo from the medians of this run', () => {
    expect(text).toContain('| HS256 1c 1x50 | 0.50x | 2.00x | 0.80x |');
  });

  it('says where server and ghz ran', () => {
    expect(text).toContain('1 server core (server on CPU 0, ghz on CPU 1)');
  });
});
