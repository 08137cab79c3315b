import { describe, expect, it } from 'vitest';
import { aggregateRepetitions, flagsOf } from '../../bench/ghz/aggregate.js';
import { interleavedOrder } from '../../bench/ghz/cell.js';
import { runCpu } from '../../bench/ghz/contention.js';
import { utilization } from '../../bench/ghz/ghz-run.js';
import type { GhzSummary } from '../../bench/ghz/ghz-report.js';
import type { RepetitionResult } from '../../bench/ghz/results.js';
import { buildScenarios, filterScenarios } from '../../bench/ghz/scenarios.js';
import { SERVERS, serves } from '../../bench/ghz/servers.js';

describe('buildScenarios', () => {
  it('builds the reference matrix for N = 3', () => {
    const ids = buildScenarios(['HS256', 'ES256'], 3).map((s) => s.id);
    expect(ids).toEqual([
      'single-hs256-1x50',
      'single-hs256-5x250',
      'single-es256-1x50',
      'single-es256-5x250',
      'multi3-hs256-1x150',
      'multi3-hs256-3x150',
      'multi3-hs256-15x750',
      'multi3-es256-1x150',
      'multi3-es256-3x150',
      'multi3-es256-15x750',
      'single-verify-hs256-1x50',
      'single-verify-es256-1x50',
    ]);
  });

  it('adds a one-connection cell only where there are several workers to leave idle', () => {
    expect(buildScenarios(['HS256'], 1, 1).filter((s) => s.connections === 1 && s.group === 'multi')).toHaveLength(1);
    expect(buildScenarios(['HS256'], 4).filter((s) => s.group === 'multi').map((s) => [s.connections, s.concurrency])).toEqual([
      [1, 200],
      [4, 200],
      [20, 1000],
    ]);
  });

  it('scales connections and concurrency with N', () => {
    const multi = buildScenarios(['HS256'], 1).filter((s) => s.group === 'multi');
    expect(multi.map((s) => [s.connections, s.concurrency, s.serverCores, s.label])).toEqual([
      [1, 50, 1, 'HS256 N=1 1x50'],
      [5, 250, 1, 'HS256 N=1 5x250'],
    ]);
  });

  it('with 2 workers on 1 core, scales connections with the workers and says so in id and label', () => {
    const multi = buildScenarios(['ES256'], 1, 2).filter((s) => s.group === 'multi');
    expect(multi.map((s) => [s.id, s.connections, s.concurrency, s.serverCores, s.workers, s.label])).toEqual([
      ['multi1w2-es256-1x100', 1, 100, 1, 2, 'ES256 2w/1c 1x100'],
      ['multi1w2-es256-2x100', 2, 100, 1, 2, 'ES256 2w/1c 2x100'],
      ['multi1w2-es256-10x500', 10, 500, 1, 2, 'ES256 2w/1c 10x500'],
    ]);
  });

  it('filters by substrings of the id', () => {
    const all = buildScenarios(['HS256', 'ES256'], 3);
    expect(filterScenarios(all, ['verify']).map((s) => s.id)).toEqual(['single-verify-hs256-1x50', 'single-verify-es256-1x50']);
    expect(filterScenarios(all, ['multi3-es256', 'single-hs256-1x50'])).toHaveLength(4);
    expect(filterScenarios(all, null)).toHaveLength(12);
  });
});

describe('server table', () => {
  it('has unique names and one server per ratio role in each group', () => {
    expect(new Set(SERVERS.map((s) => s.name)).size).toBe(SERVERS.length);
    for (const group of ['single', 'multi'] as const) {
      for (const role of ['ours', 'go', 'node-peer', 'echo'] as const) {
        expect(SERVERS.filter((s) => s.role === role && serves(s, group, 'GenerateJwt')), `${role} ${group}`).toHaveLength(1);
      }
    }
  });

  it('launches every server on 127.0.0.1 port 0 with the run\'s keys and subjects, with its core count', () => {
    for (const server of SERVERS) {
      const launch = server.launch({ keysFile: '/k.json', subjectsFile: '/s.json', cores: 3 });
      expect(launch.args.join(' ')).toContain('--host 127.0.0.1 --port 0 --keys /k.json --subjects /s.json');
      if (server.cluster) expect(launch.env['NODEMAXPROCS']).toBe('3');
      if (server.name === 'go') expect(launch.env['GOMAXPROCS']).toBe('3');
    }
  });
});

function rep(repetition: number, rpsOk: number, nonOk: Record<string, number> = {}, load: number | null = 0.5, foreign = 0.01): RepetitionResult {
  const ghz: GhzSummary = {
    count: 1000,
    okCount: 1000 - Object.values(nonOk).reduce((a, b) => a + b, 0),
    nonOkByStatus: nonOk,
    errors: {},
    totalSeconds: 1,
    rpsOk,
    rpsAllResponses: 1000,
    latencyMs: { mean: 1, p50: 1, p90: 2, p99: rpsOk / 1000 },
    endReason: 'timeout',
  };
  return {
    repetition,
    ghz,
    serverCpuSeconds: 1,
    serverCpuUsPerRequest: 1000,
    serverCpuUtilization: 1,
    loadCpuUtilization: load,
    ghzCpuSeconds: 0.5,
    foreignCpuShare: foreign,
    reportFile: 'x',
  };
}

describe('aggregateRepetitions and flags', () => {
  it('reports median (min-max) over repetitions and sums the counts', () => {
    const a = aggregateRepetitions([rep(1, 30_000), rep(2, 28_000, { Unavailable: 3 }), rep(3, 31_000, { Unavailable: 1, ResourceExhausted: 2 })]);
    expect(a?.rpsOk).toEqual({ median: 30_000, min: 28_000, max: 31_000, n: 3 });
    expect(a?.p99Ms.median).toBe(30);
    expect(a?.nonOkByStatus).toEqual({ Unavailable: 4, ResourceExhausted: 2 });
    expect(a?.nonOkCount).toBe(6);
    expect(a?.okCount).toBe(3000 - 6);
    expect(flagsOf(a ?? null)).toEqual(['non-ok']);
  });

  it('flags a cell whose load generator was saturated', () => {
    expect(flagsOf(aggregateRepetitions([rep(1, 1, {}, 0.95)]))).toEqual(['load-bound']);
    expect(flagsOf(aggregateRepetitions([rep(1, 1, {}, null)]))).toEqual([]);
  });

  it('flags a cell during which other processes took more than 5 % of the CPUs', () => {
    const a = aggregateRepetitions([rep(1, 1), rep(2, 1, {}, 0.5, 0.2)]);
    expect(a?.maxForeignCpuShare).toBe(0.2);
    expect(flagsOf(a)).toEqual(['contended']);
  });

  it('has nothing to aggregate for a failed cell', () => {
    expect(aggregateRepetitions([])).toBeNull();
    expect(flagsOf(null, ['failed'])).toEqual(['failed']);
  });
});

describe('runCpu', () => {
  const snapshot = (at: number, machineBusy: number, server: number, harness: number, harnessChildren: number) => ({ at, machineBusy, server, harness, harnessChildren });

  it('attributes the machine\'s busy time to server, ghz, harness, and the rest to others', () => {
    // 2 s on 2 CPUs = 4 CPU-seconds of capacity; 3.6 busy: server 2, ghz 1, harness 0.2, others 0.4.
    const cpu = runCpu(snapshot(0, 100, 10, 5, 1), snapshot(2000, 103.6, 12, 5.2, 2), 2);
    expect(cpu.serverCpuSeconds).toBeCloseTo(2);
    expect(cpu.ghzCpuSeconds).toBeCloseTo(1);
    expect(cpu.foreignCpuShare).toBeCloseTo(0.1);
  });

  it('never reports a negative share (tick rounding)', () => {
    expect(runCpu(snapshot(0, 0, 0, 0, 0), snapshot(1000, 1, 1.01, 0, 0), 1).foreignCpuShare).toBe(0);
  });
});

describe('utilization', () => {
  it('divides CPU time by wall time x CPUs over the middle of the run', () => {
    // 2 CPUs, half busy: 1 CPU-second per second.
    const samples = Array.from({ length: 16 }, (_, i) => ({ t: i * 200, cpu: i * 0.2 }));
    expect(utilization(samples, 3000, 2)).toBeCloseTo(0.5, 6);
  });
  it('is null when the run is too short to sample', () => {
    expect(utilization([{ t: 200, cpu: 0.1 }], 400, 1)).toBeNull();
  });
});

describe('interleavedOrder', () => {
  const order = (items: string[], reps: number) => interleavedOrder(items, reps).map((o) => `${o.item}${o.repetition}`);

  it('runs repetition r of every server before any repetition r + 1, rotating who goes first', () => {
    expect(order(['a', 'b', 'c'], 3)).toEqual(['a1', 'b1', 'c1', 'b2', 'c2', 'a2', 'c3', 'a3', 'b3']);
  });

  it('wraps the rotation when there are more repetitions than servers', () => {
    expect(order(['a', 'b'], 3)).toEqual(['a1', 'b1', 'b2', 'a2', 'a3', 'b3']);
  });

  it('has every (server, repetition) pair exactly once, and nothing for an empty column', () => {
    const pairs = order(['a', 'b', 'c', 'd'], 5);
    expect(new Set(pairs).size).toBe(20);
    expect(order([], 3)).toEqual([]);
    expect(order(['a'], 0)).toEqual([]);
  });
});
