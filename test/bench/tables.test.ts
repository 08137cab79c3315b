import { describe, expect, it } from 'vitest';
import { BOOTSTRAP_RESAMPLES, CONFIDENCE, DEFAULT_SEED } from '../../bench/common/median-interval.js';
import { planCores } from '../../bench/harness/cores.js';
import { computeRatios } from '../../bench/macro/comparisons.js';
import { summarizeSteal } from '../../bench/macro/disturbance.js';
import type { MacroResults, ServerStatus } from '../../bench/macro/results.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import { macroSummary } from '../../bench/macro/tables.js';
import { cell, rpsRounds } from './round-fixture.js';

const bootstrap = { seed: DEFAULT_SEED, resamples: BOOTSTRAP_RESAMPLES, confidence: CONFIDENCE };
const status = (
  name: string,
  role: ServerStatus['role'],
  label: string,
  stack: ServerStatus['stack'],
  usesAllCores = false,
): ServerStatus => ({
  name,
  label,
  role,
  stack,
  description: '',
  cluster: false,
  usesAllCores,
  skipped: null,
});

const scenarios = buildScenarios(['HS256'], [{ cores: 1, workers: 2 }]).filter((s) => s.id === 'single-hs256-1x50');
const servers = [
  status('jwt-grpc', 'ours', 'jwt-grpc', 'grpc-js'),
  status('go', 'go', 'Go', 'grpc-go', true),
  status('node-fast-jwt', 'node-peer', 'node-fast-jwt', 'grpc-js'),
  status('grpc-js-echo', 'echo', 'the grpc-js echo', 'grpc-js'),
  status('go-echo', 'echo', 'the Go echo', 'grpc-go', true),
];
const cells = [
  cell('jwt-grpc', 'single-hs256-1x50', rpsRounds(20_000, 19_000, 21_000, 20_500, 19_500)),
  cell('go', 'single-hs256-1x50', [{ rps: 40_000, nonOk: { Unavailable: 1 } }, ...rpsRounds(38_000, 42_000, 41_000, 39_000)]),
  cell('node-fast-jwt', 'single-hs256-1x50', rpsRounds(20_000, 19_500, 20_000, 21_000, 19_000)),
  cell('grpc-js-echo', 'single-hs256-1x50', rpsRounds(25_000, 25_000, 25_000, 25_000, 25_000)),
  cell('go-echo', 'single-hs256-1x50', rpsRounds(50_000, 50_000, 50_000, 50_000, 50_000)),
];
const results: MacroResults = {
  settings: { durationS: 5, warmupS: 2, rounds: 5, repetitions: 5, html: false, bootstrap },
  ghzPath: 'ghz',
  corePlan: planCores(null, [0, 1], true),
  scenarios,
  servers,
  cells,
  ratios: computeRatios(scenarios, servers, cells, bootstrap),
  probe: { threshold: 0.15, cpus: [{ cpu: 0, n: 26, median: 2, p10: 1.9, p90: 2.4, min: 1.8, max: 3 }] },
  steal: summarizeSteal(cells),
  notes: [],
};

describe('macroSummary', () => {
  const text = macroSummary(results);

  it('shows median (min-max) of the rounds per server and scenario', () => {
    expect(text).toContain('| **jwt-grpc** | 20,000 (19,000-21,000) |');
    expect(text).toContain('| grpc-js-echo | 25,000 |');
  });

  it('marks a cell with non-OK responses and lists them', () => {
    expect(text).toContain('| go | 40,000 (38,000-42,000) ⚠ |');
    expect(text).toMatch(/go single-hs256-1x50: Unavailable 1 of 5,000/);
  });

  it('gives every ratio with its interval, "no difference shown" where it spans 1.00, in both metrics', () => {
    // Per round ours/Go: 0.5, 0.5, 0.5, 0.5, 0.5 (round 1: 20,000 / 40,000, round 2: 19,000 / 38,000 ...).
    expect(text).toMatch(/\| scenario \| ours \/ Go \| ours \/ Node peer \|\n/);
    expect(text).toContain('| HS256 1c 1x50 | **0.50x (0.50-0.50)** | **no difference shown (0.97-1.05)** |');
    // Each server against its own echo, in tables of their own after the peers'.
    expect(text).toMatch(
      /each server against the echo of its own stack \(a ceiling, not a peer\)\n\n\| scenario \| ours \/ its echo \| Go \/ its echo \|/,
    );
    expect(text).toContain('| HS256 1c 1x50 | **0.80x (0.76-0.84)** | **0.80x (0.76-0.84)** |');
    expect(text.indexOf('ours / its echo')).toBeGreaterThan(text.indexOf('ours / Node peer'));
    // Every server at 50 µs a call: no difference in CPU per call.
    expect(text).toContain('| HS256 1c 1x50 | no difference shown (1.00-1.00) | no difference shown (1.00-1.00) |');
  });

  it('writes a verdict from the intervals', () => {
    expect(text).toContain(
      '**HS256 1c 1x50** (requests/s: the servers set the pace): Go is faster than jwt-grpc by 2.00-2.00x; ' +
        "jwt-grpc and node-fast-jwt are not distinguishable in requests/s (0.97-1.05x); jwt-grpc reaches 0.76-0.84x of the grpc-js echo's requests/s; " +
        "Go reaches 0.76-0.84x of the Go echo's requests/s.",
    );
  });

  it('says how quiet the machine was', () => {
    expect(text).toMatch(/Steal: the hypervisor took 1\.0 % of the benchmark CPUs' time during the measurements/);
    expect(text).toMatch(/CPU 0: median 2\.00 ms, p10-p90 1\.90-2\.40 ms \(−5 % to \+20 %\)/);
  });

  it('says where server and ghz ran', () => {
    expect(text).toContain('1 server core (server on CPU 0, ghz on CPU 1)');
  });
});
