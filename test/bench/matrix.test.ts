import { describe, expect, it } from 'vitest';
import { aggregateRounds, cellFlags } from '../../bench/macro/aggregate.js';
import { interleavedOrder } from '../../bench/macro/column.js';
import { utilization } from '../../bench/ghz/ghz-run.js';
import type { RowAssets } from '../../bench/macro/row-assets.js';
import { selectScenarios, selectServers } from '../../bench/macro/run.js';
import { buildScenarios, filterScenarios, onePerKind } from '../../bench/macro/scenarios.js';
import { SERVERS, serves } from '../../bench/macro/servers.js';
import { round } from './round-fixture.js';

const N3 = [{ cores: 3, workers: 3 }];
const TWO_ON_ONE = [{ cores: 1, workers: 2 }];

/** What a run makes for the opt-in rows (macro/row-assets.ts), as file names only: launching builds a command line, starts nothing. */
const ROW_ASSETS: RowAssets = {
  tls: {
    serverCert: '/c/s.crt',
    serverKey: '/c/s.key',
    clientCa: '/c/ca.crt',
    client: { caCert: '/c/ca.crt', cert: '/c/g.crt', key: '/c/g.key', serverName: 'localhost' },
    policyFile: '/c/p.json',
  },
  revocations: { dir: '/r', file: '/r/revocations.jsonl', preloaded: 10_000, adminTokenFile: '/r/admin-token', adminToken: 'x'.repeat(32) },
  redis: { url: 'redis://:p@127.0.0.1:6379/0', pid: 1 },
  otlpTracesEndpoint: 'http://127.0.0.1:1/v1/traces',
  h2load: '/h2load',
  loadSidePids: [],
};

describe('buildScenarios', () => {
  it('builds the whole matrix for N = 3', () => {
    const ids = buildScenarios(['HS256', 'ES256'], N3).map((s) => s.id);
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
      'single-protected-es256-1x50',
    ]);
  });

  it('has a protected cell per asymmetric algorithm only: a remote verifier gets public keys', () => {
    const protectedCells = buildScenarios(['HS256', 'ES256', 'EdDSA'], N3).filter((s) => s.method === 'Hello');
    expect(protectedCells.map((s) => [s.id, s.label])).toEqual([
      ['single-protected-es256-1x50', 'Protected ES256 1c 1x50'],
      ['single-protected-eddsa-1x50', 'Protected EdDSA 1c 1x50'],
    ]);
  });

  it('adds a one-connection scenario only where there are several workers to leave idle', () => {
    expect(buildScenarios(['HS256'], [{ cores: 1, workers: 1 }]).filter((s) => s.connections === 1 && s.group === 'multi')).toHaveLength(1);
    expect(
      buildScenarios(['HS256'], [{ cores: 4, workers: 4 }])
        .filter((s) => s.group === 'multi')
        .map((s) => [s.connections, s.concurrency]),
    ).toEqual([
      [1, 200],
      [4, 200],
      [20, 1000],
    ]);
  });

  it('scales connections and concurrency with N', () => {
    const multi = buildScenarios(['HS256'], [{ cores: 1, workers: 1 }]).filter((s) => s.group === 'multi');
    expect(multi.map((s) => [s.connections, s.concurrency, s.serverCores, s.label])).toEqual([
      [1, 50, 1, 'HS256 N=1 1x50'],
      [5, 250, 1, 'HS256 N=1 5x250'],
    ]);
  });

  it('with 2 workers on 1 core, scales connections with the workers and says so in id and label', () => {
    const multi = buildScenarios(['ES256'], TWO_ON_ONE).filter((s) => s.group === 'multi');
    expect(multi.map((s) => [s.id, s.connections, s.concurrency, s.serverCores, s.workers, s.label])).toEqual([
      ['multi1w2-es256-1x100', 1, 100, 1, 2, 'ES256 2w/1c 1x100'],
      ['multi1w2-es256-2x100', 2, 100, 1, 2, 'ES256 2w/1c 2x100'],
      ['multi1w2-es256-10x500', 10, 500, 1, 2, 'ES256 2w/1c 10x500'],
    ]);
  });

  it('filters by substrings of the id', () => {
    const all = buildScenarios(['HS256', 'ES256'], N3);
    expect(filterScenarios(all, ['verify']).map((s) => s.id)).toEqual(['single-verify-hs256-1x50', 'single-verify-es256-1x50']);
    expect(filterScenarios(all, ['multi3-es256', 'single-hs256-1x50'])).toHaveLength(4);
    expect(filterScenarios(all, null)).toHaveLength(13);
  });
});

describe('what a profile runs', () => {
  const all = buildScenarios(['HS256', 'ES256'], TWO_ON_ONE);

  it('quick (ratios): the 1-core scenarios, the "N cores" ones only with --server-cores, no variant servers', () => {
    expect(selectScenarios(all, { cells: null, scope: 'ratios', serverCoresGiven: false }).every((s) => s.group === 'single')).toBe(true);
    expect(selectScenarios(all, { cells: null, scope: 'ratios', serverCoresGiven: true })).toHaveLength(all.length);
    const servers = selectServers(SERVERS, { servers: null, scope: 'ratios' }).map((s) => s.name);
    expect(servers).toContain('go-echo');
    expect(servers).toEqual(expect.arrayContaining(['protected-local', 'protected-rpc']));
    expect(servers).not.toContain('jwt-grpc-v8-defaults');
    expect(selectServers(SERVERS, { servers: ['jwt-grpc-v8-defaults'], scope: 'ratios' }).map((s) => s.name)).toEqual([
      'jwt-grpc-v8-defaults',
    ]);
  });

  it('smoke (one-per-kind): one scenario per group and method, the algorithms in turn', () => {
    expect(onePerKind(all).map((s) => s.id)).toEqual([
      'single-hs256-1x50',
      'multi1w2-es256-2x100',
      'single-verify-hs256-1x50',
      'single-protected-es256-1x50',
    ]);
    expect(selectScenarios(all, { cells: ['verify'], scope: 'one-per-kind', serverCoresGiven: false })).toHaveLength(2);
  });
});

describe('server table', () => {
  it('has unique names and one server per ratio role in each group, and an echo of each stack', () => {
    expect(new Set(SERVERS.map((s) => s.name)).size).toBe(SERVERS.length);
    for (const group of ['single', 'multi'] as const) {
      for (const role of ['ours', 'go', 'node-peer'] as const) {
        expect(
          SERVERS.filter((s) => s.role === role && serves(s, group, 'GenerateJwt')),
          `${role} ${group}`,
        ).toHaveLength(1);
      }
      const echoes = SERVERS.filter((s) => s.role === 'echo' && serves(s, group, 'GenerateJwt')).map((s) => s.stack);
      expect(echoes.sort(), group).toEqual(['grpc-go', 'grpc-js']);
    }
  });

  it("launches every server on 127.0.0.1 port 0 with the run's keys and subjects, with its worker count", () => {
    for (const server of SERVERS) {
      const launch = server.launch({ keysFile: '/k.json', subjectsFile: '/s.json', workers: 3, assets: ROW_ASSETS });
      expect(launch.args.join(' ')).toContain('--host 127.0.0.1 --port 0 --keys /k.json --subjects /s.json');
      if (server.cluster) expect(launch.env['NODEMAXPROCS']).toBe('3');
      if (server.name === 'go' || server.name === 'go-echo') expect(launch.env['GOMAXPROCS']).toBe('3');
    }
    const goEcho = SERVERS.find((s) => s.name === 'go-echo');
    expect(goEcho?.launch({ keysFile: '/k', subjectsFile: '/s', workers: 1 }).args[0]).toBe('--echo');
  });

  it('runs jwt-grpc on --transport http2 (its own) and jwt-grpc-grpc-js on --transport grpc-js', () => {
    const args = (name: string): string =>
      SERVERS.find((s) => s.name === name)
        ?.launch({ keysFile: '/k', subjectsFile: '/s', workers: 1, assets: ROW_ASSETS })
        .args.join(' ') ?? '';
    const stack = (name: string) => SERVERS.find((s) => s.name === name)?.stack;
    expect(args('jwt-grpc')).toContain('--transport http2');
    expect(stack('jwt-grpc')).toBe('own HTTP/2');
    expect(args('jwt-grpc-grpc-js')).toContain('--transport grpc-js');
    expect(stack('jwt-grpc-grpc-js')).toBe('grpc-js');
    // Every row of ours names its transport: none depends on the CLI's default.
    for (const server of SERVERS.filter((s) => s.name.startsWith('jwt-grpc')))
      expect(args(server.name), server.name).toMatch(/--transport (http2|grpc-js)/);
  });

  it('runs each variant with what it varies, and nothing else', () => {
    const launch = (name: string) => SERVERS.find((s) => s.name === name)?.launch({ keysFile: '/k', subjectsFile: '/s', workers: 1 });
    const ours = launch('jwt-grpc');
    // V8's default young generation: a setting serve takes as the user's, so it adds no 4 MiB semi-space.
    const defaults = launch('jwt-grpc-v8-defaults');
    expect(defaults?.args.slice(0, 1)).toEqual(['--semi-space-growth-factor=2']);
    expect(defaults?.args.join(' ')).not.toContain('--max-semi-space-size');
    expect(ours?.args[0]).toBe('--max-semi-space-size=4');
    const metrics = launch('jwt-grpc-metrics');
    expect(metrics?.args.join(' ')).toBe(`${ours?.args.join(' ')} --metrics-port 0`);
    // Bun runs the same CLI with the same serve options, without V8 flags.
    const bun = launch('jwt-grpc-bun');
    expect(bun?.command).not.toBe(process.execPath);
    expect(bun?.args).toEqual(ours?.args.slice(1));
    for (const verify of ['local', 'rpc']) {
      const row = SERVERS.find((s) => s.name === `protected-${verify}`);
      expect(row?.methods).toEqual(['Hello']);
      expect(launch(`protected-${verify}`)?.args.join(' ')).toContain(`--verify ${verify}`);
    }
  });
});

describe('aggregateRounds and flags', () => {
  it('reports median (min-max) over rounds and sums the counts', () => {
    const rounds = [
      round(1, { rps: 30_000 }),
      round(2, { rps: 28_000, nonOk: { Unavailable: 3 } }),
      round(3, { rps: 31_000, nonOk: { Unavailable: 1, ResourceExhausted: 2 } }),
    ];
    const a = aggregateRounds(rounds);
    expect(a?.rpsOk).toEqual({ median: 30_000, min: 28_000, max: 31_000, n: 3 });
    expect(a?.p99Ms.median).toBe(30);
    expect(a?.nonOkByStatus).toEqual({ Unavailable: 4, ResourceExhausted: 2 });
    expect(a?.nonOkCount).toBe(6);
    expect(a?.okCount).toBe(3000 - 6);
    expect(cellFlags(rounds)).toEqual(['non-ok']);
  });

  it('flags a round whose load generator was saturated', () => {
    expect(round(1, { rps: 1, load: 0.95 }).flags).toEqual(['load-bound']);
    expect(round(1, { rps: 1, load: null }).flags).toEqual([]);
  });

  it('flags other processes over 5 %, steal over 10 %, and a probe that moved, and counts the disturbed rounds', () => {
    const rounds = [
      round(1, { rps: 1 }),
      round(2, { rps: 1, foreign: 0.2 }),
      round(3, { rps: 1, steal: 0.12 }),
      round(4, { rps: 1, steal: 0.08, probeDeviation: -0.2 }),
    ];
    expect(rounds.map((r) => r.flags)).toEqual([[], ['contended'], ['stolen'], ['slowed']]);
    const a = aggregateRounds(rounds);
    expect(a?.maxForeignCpuShare).toBe(0.2);
    expect(a?.maxStealShare).toBe(0.12);
    expect(a?.maxProbeDeviation).toBe(-0.2);
    expect(a?.disturbedRounds).toBe(3);
    expect(cellFlags(rounds, ['failed'])).toEqual(['contended', 'stolen', 'slowed', 'failed']);
  });

  it('has nothing to aggregate for a failed cell', () => {
    expect(aggregateRounds([])).toBeNull();
    expect(cellFlags([], ['failed'])).toEqual(['failed']);
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
  const order = (items: string[], rounds: number) => interleavedOrder(items, rounds).map((o) => `${o.item}${o.round}`);

  it('measures every server in round r before any in round r + 1, rotating who goes first', () => {
    expect(order(['a', 'b', 'c'], 3)).toEqual(['a1', 'b1', 'c1', 'b2', 'c2', 'a2', 'c3', 'a3', 'b3']);
  });

  it("marks each round's first measurement, where the ES256 floor is read with every server paused", () => {
    const opening = interleavedOrder(['a', 'b', 'c'], 3).filter((o) => o.opensRound);
    expect(opening.map((o) => `${o.item}${o.round}`)).toEqual(['a1', 'b2', 'c3']);
  });

  it('wraps the rotation when there are more rounds than servers', () => {
    expect(order(['a', 'b'], 3)).toEqual(['a1', 'b1', 'b2', 'a2', 'a3', 'b3']);
  });

  it('has every (server, round) pair exactly once, and nothing for an empty column', () => {
    const pairs = order(['a', 'b', 'c', 'd'], 5);
    expect(new Set(pairs).size).toBe(20);
    expect(order([], 3)).toEqual([]);
    expect(order(['a'], 0)).toEqual([]);
  });
});
