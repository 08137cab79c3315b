import { describe, expect, it } from 'vitest';
import { COMPARISONS, computeRatios, headlineMetric, perRoundRatios, pickPair } from '../../bench/macro/comparisons.js';
import type { RatioResult, ServerStatus } from '../../bench/macro/results.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import { verdictSentence } from '../../bench/macro/verdict.js';
import { cell, rpsRounds } from './round-fixture.js';

const status = (
  name: string,
  role: ServerStatus['role'],
  stack: ServerStatus['stack'],
  usesAllCores = false,
  label = name,
): ServerStatus => ({
  name,
  label,
  role,
  stack,
  description: '',
  cluster: usesAllCores,
  usesAllCores,
  skipped: null,
});
const ours = status('jwt-grpc', 'ours', 'grpc-js');
const cluster = status('jwt-grpc-cluster', 'ours', 'grpc-js', true);
const go = status('go', 'go', 'grpc-go', true, 'Go');
const grpcJsEcho = status('grpc-js-echo', 'echo', 'grpc-js', false, 'the grpc-js echo');
const goEcho = status('go-echo', 'echo', 'grpc-go', true, 'the Go echo');
const comparison = (id: string) => COMPARISONS.find((c) => c.id === id) as (typeof COMPARISONS)[number];
const seeded = { seed: 1, resamples: 10_000, confidence: 0.95 };

const [single] = buildScenarios(['HS256'], []);
const twoOnOne = buildScenarios(['HS256'], [{ cores: 1, workers: 2 }]).find((s) => s.group === 'multi');
const four = buildScenarios(['HS256'], [{ cores: 4, workers: 4 }]).find((s) => s.group === 'multi');

describe('pickPair', () => {
  it('picks ours and Go by role', () => {
    expect(pickPair(comparison('ours-go'), [go, ours, grpcJsEcho], single!)).toEqual({ subject: ours, baseline: go });
    expect(pickPair(comparison('ours-node-peer'), [go, ours], single!)).toBeNull();
  });

  it("takes the echo of the subject's own stack as its ceiling", () => {
    expect(pickPair(comparison('ours-ceiling'), [ours, goEcho, grpcJsEcho], single!)?.baseline).toBe(grpcJsEcho);
    expect(pickPair(comparison('go-ceiling'), [go, grpcJsEcho, goEcho], single!)?.baseline).toBe(goEcho);
    // Ours on its own transport has no echo of that stack: no ceiling ratio rather than a wrong one.
    expect(pickPair(comparison('ours-ceiling'), [status('jwt-grpc', 'ours', 'own HTTP/2'), grpcJsEcho], single!)).toBeNull();
  });

  it('on N cores, takes an echo as ceiling only if it can use them (the Go echo), not the one-process grpc-js echo', () => {
    expect(pickPair(comparison('ours-ceiling'), [cluster, grpcJsEcho], four!)).toBeNull();
    expect(pickPair(comparison('go-ceiling'), [go, goEcho], four!)?.baseline).toBe(goEcho);
    // 2 workers time-sharing 1 core: the one-process echo is still the ceiling of that core.
    expect(pickPair(comparison('ours-ceiling'), [cluster, grpcJsEcho], twoOnOne!)?.baseline).toBe(grpcJsEcho);
  });

  it('compares ours with ours on grpc-js once that row runs', () => {
    const onGrpcJs = status('jwt-grpc-grpc-js', 'variant', 'grpc-js');
    expect(pickPair(comparison('ours-grpc-js-transport'), [status('jwt-grpc', 'ours', 'own HTTP/2'), onGrpcJs], single!)?.baseline).toBe(
      onGrpcJs,
    );
    expect(pickPair(comparison('grpc-js-transport-ceiling'), [onGrpcJs, grpcJsEcho], single!)?.baseline).toBe(grpcJsEcho);
  });

  it('sets ours on its own transport against the grpc-js echo on one core, not against one process on N', () => {
    const onHttp2 = status('jwt-grpc', 'ours', 'own HTTP/2');
    expect(pickPair(comparison('ours-grpc-js-echo'), [onHttp2, go, grpcJsEcho], single!)).toEqual({
      subject: onHttp2,
      baseline: grpcJsEcho,
    });
    expect(pickPair(comparison('ours-grpc-js-echo'), [cluster, grpcJsEcho], four!)).toBeNull();
    // Ours on grpc-js has that echo as its own ceiling already (`ours-ceiling`): no second column of the same ratio.
    expect(pickPair(comparison('ours-grpc-js-echo'), [ours, grpcJsEcho], single!)).toBeNull();
  });

  it('pairs each new row with what it varies: metrics against ours, ours against Bun, local verify against the RPC', () => {
    const metrics = status('jwt-grpc-metrics', 'variant', 'own HTTP/2');
    const bun = status('jwt-grpc-bun', 'variant', 'Bun, own HTTP/2');
    const onHttp2 = status('jwt-grpc', 'ours', 'own HTTP/2');
    expect(pickPair(comparison('metrics-cost'), [go, onHttp2, metrics, bun], single!)).toEqual({ subject: metrics, baseline: onHttp2 });
    expect(pickPair(comparison('node-bun'), [go, onHttp2, metrics, bun], single!)).toEqual({ subject: onHttp2, baseline: bun });
    const local = status('protected-local', 'protected', 'grpc-js');
    const rpc = status('protected-rpc', 'protected', 'grpc-js');
    expect(pickPair(comparison('protected-local-rpc'), [rpc, local], single!)).toEqual({ subject: local, baseline: rpc });
    expect(pickPair(comparison('protected-local-rpc'), [local, onHttp2], single!)).toBeNull();
  });
});

describe('per-round ratios', () => {
  it('divides within each round both servers measured, skipping a round one of them lacks', () => {
    const a = cell('jwt-grpc', 's', rpsRounds(10, 20, 30));
    const b = cell('go', 's', rpsRounds(20, 40));
    expect(perRoundRatios(a, b, 'rps')).toEqual([
      { round: 1, ratio: 0.5 },
      { round: 2, ratio: 0.5 },
    ]);
  });

  it('reads CPU per call as calls per CPU-second: > 1 when the subject needs less CPU', () => {
    const a = cell('jwt-grpc', 's', [{ rps: 1, cpuUs: 50 }]);
    const b = cell('go', 's', [{ rps: 1, cpuUs: 100 }]);
    expect(perRoundRatios(a, b, 'callsPerCpuSecond')).toEqual([{ round: 1, ratio: 2 }]);
  });
});

describe('headlineMetric', () => {
  it('is requests/s where both servers set the pace', () => {
    expect(headlineMetric([cell('a', 's', rpsRounds(1, 1, 1)), cell('b', 's', rpsRounds(1, 1, 1))])).toBe('rps');
  });
  it('is CPU per call where ghz was ≥ 90 % busy in any round, or a server was not saturated', () => {
    expect(headlineMetric([cell('a', 's', rpsRounds(1, 1)), cell('b', 's', [{ rps: 1 }, { rps: 1, load: 0.93 }])])).toBe(
      'callsPerCpuSecond',
    );
    expect(
      headlineMetric([
        cell('a', 's', rpsRounds(1, 1)),
        cell('b', 's', [
          { rps: 1, utilization: 0.7 },
          { rps: 1, utilization: 0.75 },
        ]),
      ]),
    ).toBe('callsPerCpuSecond');
  });
});

describe('computeRatios', () => {
  it('gives both metrics of every comparison with both servers, one headline each, reproducibly', () => {
    const scenarios = [single!];
    const cells = [cell('jwt-grpc', single!.id, rpsRounds(10, 11, 9, 10, 10)), cell('go', single!.id, rpsRounds(16, 18, 17, 15, 16))];
    const results = computeRatios(scenarios, [ours, go, grpcJsEcho], cells, seeded);
    expect(results.map((r) => `${r.comparison}/${r.metric}/${r.headline}`)).toEqual([
      'ours-go/rps/true',
      'ours-go/callsPerCpuSecond/false',
    ]);
    expect(results[0]?.perRound.map((r) => r.round)).toEqual([1, 2, 3, 4, 5]);
    expect(computeRatios(scenarios, [ours, go], cells, seeded)).toEqual(results);
  });
});

describe('verdictSentence', () => {
  const result = (low: number | null, high: number | null, metric: RatioResult['metric'] = 'rps', n = 10): RatioResult => ({
    scenario: 's',
    comparison: 'ours-go',
    subject: 'jwt-grpc',
    baseline: 'go',
    metric,
    perRound: [],
    interval: { median: low === null ? 0.6 : (low + (high as number)) / 2, low, high, n },
    headline: true,
  });
  const peer = comparison('ours-go');

  it('names the faster server and by how much, from the interval', () => {
    expect(verdictSentence(peer, result(1 / 1.8, 1 / 1.5), ours, go)).toBe('Go is faster than jwt-grpc by 1.50-1.80x');
    expect(verdictSentence(peer, result(1.1, 1.3), ours, go)).toBe('jwt-grpc is faster than Go by 1.10-1.30x');
  });

  it('says "not distinguishable" when the interval includes 1.00', () => {
    expect(verdictSentence(peer, result(0.93, 1.06), ours, go)).toBe('jwt-grpc and Go are not distinguishable in requests/s (0.93-1.06x)');
  });

  it('speaks of CPU per call when that is the headline', () => {
    expect(verdictSentence(peer, result(0.5, 0.6, 'callsPerCpuSecond'), ours, go)).toBe(
      'Go is cheaper per call than jwt-grpc by 1.67-2.00x (server CPU)',
    );
  });

  it("turns a ceiling ratio of CPU into the stack's share of the call", () => {
    const ceiling = { ...result(0.7, 0.78, 'callsPerCpuSecond'), comparison: 'ours-ceiling', baseline: 'grpc-js-echo' };
    expect(verdictSentence(comparison('ours-ceiling'), ceiling, ours, grpcJsEcho)).toBe(
      "the grpc-js stack (the grpc-js echo) is 70-78 % of jwt-grpc's CPU per call, its own work the rest",
    );
  });

  it('claims nothing from too few rounds', () => {
    expect(verdictSentence(peer, result(null, null, 'rps', 2), ours, go)).toBe(
      'jwt-grpc / Go: 0.60x in requests/s over 2 rounds, too few for an interval',
    );
  });
});
