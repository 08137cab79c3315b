/**
 * The opt-in rows of the benchmark (mutual TLS with and without a policy, tracing, a
 * background JWKS load, jti and revocation, another commit's build) and their selection:
 * ghz's and h2load's arguments, each row's `serve` command, `--features` and
 * `--baseline-ref`, and, over real mutual TLS, that the benchmark's policy admits ghz's
 * reference GenerateJwt request; the revocations file the revocation row starts on, read
 * by the real file store; RevokeJwt through ghz with a fresh jti per call, on every store.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../bench/kit/program.js';
import { ghzArgs } from '../../bench/ghz/ghz-args.js';
import { planCores } from '../../bench/harness/cores.js';
import { findRedisServer } from '../../bench/kit/redis.js';
import { findOnPath } from '../../bench/kit/exec.js';
import { GO_TOOLS, findGoTool } from '../../bench/kit/tools.js';
import { writeKeysFile } from '../../bench/harness/keys-file.js';
import { repoPath } from '../../bench/kit/paths.js';
import {
  type RevokeStoreResult,
  fsyncVerdict,
  jtiPrefix,
  measureRevokeThroughput,
  revokeData,
  revokeSection,
  revokeServer,
} from '../../bench/macro/revoke-throughput.js';
import { REVOCATION_PRELOAD, writeRevocationsFile } from '../../bench/revocation/entries.js';
import { createFileRevocationStore } from '../../src/revocation/file-store.js';
import type { Revocation } from '../../src/contracts/revocation-store.js';
import { makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { backgroundLoadArgs, discoveryPort } from '../../bench/macro/background-load.js';
import { resolveRef } from '../../bench/macro/baseline.js';
import { withoutLoadSide } from '../../bench/macro/column.js';
import { COMPARISONS, pickPair } from '../../bench/macro/comparisons.js';
import { FEATURES } from '../../bench/macro/features.js';
import { parseH2loadReport, saturatingArgs } from '../../bench/macro/jwks-throughput.js';
import type { ServerStatus } from '../../bench/macro/results.js';
import {
  BENCH_CALLER_ID,
  BENCH_POLICY_SUBJECT,
  NO_ASSETS,
  type RowAssets,
  benchPolicy,
  prepareRowAssets,
} from '../../bench/macro/row-assets.js';
import { selectServers } from '../../bench/macro/run.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import { SERVERS, SERVER_NAMES, type ServerSpec, baselineServer } from '../../bench/macro/servers.js';
import { parseCommandLine } from '../../bench/options/parse.js';
import type { BenchOptions } from '../../bench/options/types.js';
import { checkPolicy, createJwtServer } from '../../src/lib/index.js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';

const row = (name: string): ServerSpec => SERVERS.find((s) => s.name === name) as ServerSpec;
const CTX = { keysFile: '/k.json', subjectsFile: '/s.json', workers: 1 };
const ASSETS: RowAssets = {
  tls: {
    serverCert: '/c/server.crt',
    serverKey: '/c/server.key',
    clientCa: '/c/ca.crt',
    client: { caCert: '/c/ca.crt', cert: '/c/ghz.crt', key: '/c/ghz.key', serverName: 'localhost' },
    policyFile: '/c/policy.json',
  },
  revocations: { dir: '/r', file: '/r/revocations.jsonl', preloaded: 10_000, adminTokenFile: '/r/admin-token', adminToken: 's'.repeat(32) },
  redis: { url: 'redis://:p@127.0.0.1:6379/0', pid: 1 },
  otlpTracesEndpoint: 'http://127.0.0.1:4318/v1/traces',
  h2load: '/usr/bin/h2load',
  loadSidePids: [],
};

function options(...argv: string[]): BenchOptions {
  const parsed = parseCommandLine(argv, SERVER_NAMES);
  if (parsed.kind !== 'run') throw new Error('expected a run');
  return parsed.options;
}

describe('the reference work', () => {
  it('every row of ours serves with --verify-issued, as the peers verify what they sign; no peer is given it', () => {
    const ours = SERVERS.filter((s) => (s.role === 'ours' || s.role === 'variant') && s.name !== 'jwt-grpc-default');
    expect(ours.map((s) => s.name)).toContain('jwt-grpc-cluster');
    for (const server of ours) {
      const args = server.launch({ ...CTX, assets: ASSETS }).args;
      expect(args, server.name).toContain('--verify-issued');
    }
    for (const server of SERVERS.filter((s) => !ours.includes(s)))
      expect(server.launch({ ...CTX, assets: ASSETS }).args, server.name).not.toContain('--verify-issued');
    // The one row without it measures what it costs, against jwt-grpc: the same command but the flag.
    expect(row('jwt-grpc-default').launch(CTX).args).toEqual(
      row('jwt-grpc')
        .launch(CTX)
        .args.filter((a) => a !== '--verify-issued'),
    );
    expect(options('--features', 'verify-issued')).toMatchObject({
      servers: ['jwt-grpc', 'jwt-grpc-default'],
      cells: FEATURES.tracing.cells,
    });
  });
});

describe('ghz over mutual TLS', () => {
  const call = {
    method: 'GenerateJwt',
    data: { algorithm: 'HS256' },
    connections: 1,
    concurrency: 50,
    durationS: 1,
    cpus: 1,
    port: 5,
    output: '/o.json',
    name: 'n',
  } as const;

  it('dials plaintext without tls, and with it presents the client certificate and checks the server name', () => {
    expect(ghzArgs(call)).toContain('--insecure');
    const args = ghzArgs({ ...call, tls: ASSETS.tls?.client });
    expect(args).not.toContain('--insecure');
    expect(args.join(' ')).toContain('--cacert /c/ca.crt --cert /c/ghz.crt --key /c/ghz.key --cname localhost');
  });
});

describe('the opt-in rows', () => {
  it("serve mutual TLS, the policy row adding --policy; each needs the run's certificates", () => {
    const plain = row('jwt-grpc-mtls')
      .launch({ ...CTX, assets: ASSETS })
      .args.join(' ');
    expect(plain).toContain('--tls-cert /c/server.crt --tls-key /c/server.key --tls-client-ca /c/ca.crt');
    expect(plain).not.toContain('--policy');
    const withPolicy = row('jwt-grpc-mtls-policy')
      .launch({ ...CTX, assets: ASSETS })
      .args.join(' ');
    expect(withPolicy).toContain('--tls-client-ca /c/ca.crt --policy /c/policy.json');
    expect(() => row('jwt-grpc-mtls').launch(CTX)).toThrow(/without the run's row assets/);
    expect(() => row('jwt-grpc-mtls').launch({ ...CTX, assets: NO_ASSETS })).toThrow(/test certificates was not prepared/);
    expect(row('jwt-grpc-mtls-policy').needs).toEqual(['mtls']);
  });

  it("trace with the ratio sampler at 1.0 and 0.01, exporting to the run's sink", () => {
    for (const [name, ratio] of [
      ['jwt-grpc-otel-1', '1.0'],
      ['jwt-grpc-otel-0.01', '0.01'],
    ] as const) {
      const launch = row(name).launch({ ...CTX, assets: ASSETS });
      expect(launch.args).toContain('--otel');
      expect(launch.env).toMatchObject({
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: ratio,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
        NODEMAXPROCS: '1',
      });
    }
    // Tracing off is the plain row: no --otel, no OTEL_ variable of its own.
    const off = row('jwt-grpc').launch(CTX);
    expect(off.args).not.toContain('--otel');
    expect(Object.keys(off.env).filter((k) => k.startsWith('OTEL_'))).toEqual([]);
  });

  it('serve discovery under a background JWKS load of 1,000 requests a second', () => {
    const jwks = row('jwt-grpc-jwks-load');
    expect(jwks.launch(CTX).args.join(' ')).toContain('--http-port 0 --issuer http://127.0.0.1');
    expect(jwks.backgroundLoad).toEqual({ kind: 'jwks', rps: 1000 });
    const args = backgroundLoadArgs({ kind: 'jwks', rps: 1000 }, 8080, 5);
    expect(args.join(' ')).toBe('--h1 -c 10 --rps=100 -D 5 http://127.0.0.1:8080/.well-known/jwks.json');
  });

  it("run another commit's CLI as jwt-grpc@REF, with the flags of jwt-grpc", () => {
    const baseline = baselineServer('abc1234', '/tmp/x/dist/src/bin/jwt-grpc.js', true);
    expect(baseline.name).toBe('jwt-grpc@abc1234');
    const launch = baseline.launch(CTX);
    expect(launch.args[launch.args.indexOf('/tmp/x/dist/src/bin/jwt-grpc.js') + 1]).toBe('serve');
    expect(launch.args.slice(1)).toEqual(
      row('jwt-grpc')
        .launch(CTX)
        .args.slice(1)
        .map((a) => (a.endsWith('jwt-grpc.js') ? '/tmp/x/dist/src/bin/jwt-grpc.js' : a)),
    );
    // A commit from before the jti has no --no-jti (it would exit 2 on it) and signs none: the flag is left out.
    const older = baselineServer('abc1234', '/tmp/x/dist/src/bin/jwt-grpc.js', false).launch(CTX).args;
    expect(older).not.toContain('--no-jti');
    expect(older).toEqual(launch.args.filter((a) => a !== '--no-jti'));
    // A commit from before --verify-issued verifies every token it signs: the same work without the flag.
    const beforeMode = baselineServer('abc1234', '/tmp/x/dist/src/bin/jwt-grpc.js', true, false).launch(CTX).args;
    expect(beforeMode).toEqual(launch.args.filter((a) => a !== '--verify-issued'));
  });

  it('run only when named: no profile selects them', () => {
    const optIn = SERVERS.filter((s) => s.optIn === true).map((s) => s.name);
    expect(optIn.sort()).toEqual([
      'jwt-grpc-default',
      'jwt-grpc-jti',
      'jwt-grpc-jwks-load',
      'jwt-grpc-mtls',
      'jwt-grpc-mtls-policy',
      'jwt-grpc-otel-0.01',
      'jwt-grpc-otel-1',
      'jwt-grpc-revocation',
    ]);
    for (const scope of ['all', 'ratios', 'one-per-kind'] as const) {
      expect(selectServers(SERVERS, { servers: null, scope }).filter((s) => optIn.includes(s.name))).toEqual([]);
    }
    expect(selectServers(SERVERS, { servers: ['jwt-grpc-mtls'], scope: 'all' }).map((s) => s.name)).toEqual(['jwt-grpc-mtls']);
  });

  it('enter their named comparisons', () => {
    const status = (name: string, role: ServerStatus['role'] = 'variant'): ServerStatus => ({
      name,
      label: name,
      role,
      stack: 'own HTTP/2',
      description: '',
      cluster: false,
      usesAllCores: false,
      skipped: null,
    });
    const [scenario] = buildScenarios(['HS256'], []);
    const column = [
      status('jwt-grpc', 'ours'),
      status('jwt-grpc-mtls'),
      status('jwt-grpc-mtls-policy'),
      status('jwt-grpc-otel-1'),
      status('jwt-grpc-otel-0.01'),
      status('jwt-grpc-jwks-load'),
      status('jwt-grpc-jti'),
      status('jwt-grpc-revocation'),
      status('jwt-grpc@abc1234'),
      status('jwt-grpc-default'),
    ];
    const pair = (id: string): string[] => {
      const found = pickPair(
        COMPARISONS.find((c) => c.id === id) as (typeof COMPARISONS)[number],
        column,
        scenario as NonNullable<typeof scenario>,
      );
      return found === null ? [] : [found.subject.name, found.baseline.name];
    };
    expect(pair('mtls-policy')).toEqual(['jwt-grpc-mtls-policy', 'jwt-grpc-mtls']);
    expect(pair('tracing-1')).toEqual(['jwt-grpc-otel-1', 'jwt-grpc']);
    expect(pair('tracing-0.01')).toEqual(['jwt-grpc-otel-0.01', 'jwt-grpc']);
    expect(pair('jwks-load')).toEqual(['jwt-grpc-jwks-load', 'jwt-grpc']);
    expect(pair('baseline-ref')).toEqual(['jwt-grpc', 'jwt-grpc@abc1234']);
    expect(pair('jti-cost')).toEqual(['jwt-grpc-jti', 'jwt-grpc']);
    expect(pair('revocation-cost')).toEqual(['jwt-grpc-revocation', 'jwt-grpc']);
    expect(pair('revocation-set')).toEqual(['jwt-grpc-revocation', 'jwt-grpc-jti']);
    expect(pair('verify-issued')).toEqual(['jwt-grpc-default', 'jwt-grpc']);
  });

  it("sign with a jti, and keep revocations in the run's pre-loaded file with its admin secret", () => {
    const args = (name: string, assets: RowAssets = ASSETS): readonly string[] => row(name).launch({ ...CTX, assets }).args;
    // The plain row: no jti (as the Go peer), no store.
    expect(args('jwt-grpc')).toContain('--no-jti');
    // The jti row differs from it by --no-jti only.
    expect(args('jwt-grpc-jti')).toEqual(args('jwt-grpc').filter((a) => a !== '--no-jti'));
    const revocation = args('jwt-grpc-revocation');
    expect(revocation).not.toContain('--no-jti');
    expect(revocation.join(' ')).toContain('--revocations /r/revocations.jsonl --admin-token-file /r/admin-token');
    expect(revocation.join(' ')).not.toContain('s'.repeat(32)); // the secret itself never is an argument
    expect(row('jwt-grpc-revocation').needs).toEqual(['revocations']);
    expect(row('jwt-grpc-revocation').methods).toEqual(['GenerateJwt', 'VerifyJwt']);
    expect(() => args('jwt-grpc-revocation', NO_ASSETS)).toThrow(/revocations file and admin secret was not prepared/);
  });

  it("revoke on each store: memory (no store option), a copy of the pre-loaded file, the run's Redis", () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-revoke-'));
    try {
      writeRevocationsFile(join(dir, 'revocations.jsonl'), 3);
      const assets: RowAssets = {
        ...ASSETS,
        revocations: { ...(ASSETS.revocations as NonNullable<RowAssets['revocations']>), dir, file: join(dir, 'revocations.jsonl') },
      };
      const args = (store: 'memory' | 'file' | 'redis'): string =>
        revokeServer(store)
          .launch({ ...CTX, assets })
          .args.join(' ');
      expect(args('memory')).toMatch(/--admin-token-file \/r\/admin-token$/);
      expect(args('memory')).not.toMatch(/--revocations |--revocation-store |--no-jti/);
      expect(args('file')).toContain(`--revocations ${join(dir, 'revoke-throughput.jsonl')} --admin-token-file`);
      expect(readFileSync(join(dir, 'revoke-throughput.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'revocations.jsonl'), 'utf8'));
      expect(args('redis')).toContain('--revocation-store redis://:p@127.0.0.1:6379/0 --admin-token-file');
      expect(revokeServer('redis').needs).toEqual(['revocations', 'redis']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the revocations file the revocation row starts on', () => {
  it('is the documented format: the real file store reads every entry, each a 22-character jti revoked for 1 to 2 hours', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-preload-'));
    try {
      const file = join(dir, 'revocations.jsonl');
      const now = Date.now() / 1000;
      writeRevocationsFile(file, REVOCATION_PRELOAD, now);
      const store = createFileRevocationStore(file, {
        logger: { info: () => undefined, warn: (m) => expect.fail(m), error: (m) => expect.fail(m) },
      });
      const loaded: Revocation[] = [];
      await store.start((batch) => loaded.push(...batch));
      await store.close();
      expect(loaded).toHaveLength(REVOCATION_PRELOAD);
      expect(new Set(loaded.map((r) => r.jti)).size).toBe(REVOCATION_PRELOAD);
      for (const r of loaded) {
        expect(r.jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(r.expiresAt - now).toBeGreaterThan(3599);
        expect(r.expiresAt - now).toBeLessThan(7200);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('RevokeJwt through ghz', () => {
  it("fills a jti per call from ghz's request number, sends the admin secret as metadata, and keeps templates on", () => {
    const call = {
      method: 'RevokeJwt',
      data: revokeData('run-file-3-', 1767225600),
      templated: true,
      metadata: { authorization: 'Bearer s3cret' },
      connections: 1,
      concurrency: 50,
      durationS: 1,
      cpus: 1,
      port: 5,
      output: '/o.json',
      name: 'n',
    } as const;
    const args = ghzArgs(call);
    expect(args[args.indexOf('--call') + 1]).toBe('jwt.services.JwtService.RevokeJwt');
    expect(JSON.parse(args[args.indexOf('-d') + 1] as string)).toEqual({ jti: 'run-file-3-{{.RequestNumber}}', expires_at: '1767225600' });
    expect(JSON.parse(args[args.indexOf('--metadata') + 1] as string)).toEqual({ authorization: 'Bearer s3cret' });
    expect(args).not.toContain('--disable-template-data');
    expect(args).not.toContain('--disable-template-functions');
    // Every other call sends its request unchanged: no template work in ghz.
    expect(ghzArgs({ ...call, method: 'GenerateJwt', data: { algorithm: 'HS256' }, templated: undefined })).toContain(
      '--disable-template-data',
    );
  });

  it('gives every round of every store a prefix of its own, and refuses one that would break the JSON or the template', () => {
    const prefixes = ['memory', 'file', 'redis'].flatMap((store) => [0, 1, 2, 10].map((round) => jtiPrefix('lx1', store as 'file', round)));
    expect(new Set(prefixes).size).toBe(prefixes.length);
    // Round 1 and round 10 must not overlap: "lx1-file-1-0" + "0" would be round 10's first jti without the trailing dash.
    expect(jtiPrefix('lx1', 'file', 1)).toBe('lx1-file-1-');
    expect(() => revokeData('a"b', 1)).toThrow(/prefix/);
    expect(() => revokeData('{{.X}}', 1)).toThrow(/prefix/);
  });
});

describe("whether fsync sets the file store's pace", () => {
  const store = (name: 'memory' | 'file', low: number, high: number, busy: number, ghz: number | null = 0.5): RevokeStoreResult => ({
    store: name,
    rounds: [1, 2, 3, 4, 5].map((round) => ({
      round,
      ok: 1000,
      nonOk: 0,
      durationS: 1,
      rps: 1000,
      p50Ms: 1,
      p99Ms: 2,
      serverCpuSeconds: busy,
      serverCpuUsPerRevocation: 1,
      serverCpuUtilization: busy,
      storeCpuSeconds: null,
      linesAppended: null,
      loadCpuUtilization: ghz,
      foreignCpuShare: 0,
    })),
    rps: { median: (low + high) / 2, low, high, n: 5 },
    serverCpuUsPerRevocation: null,
    storeCpuUsPerRevocation: null,
    skipped: null,
    error: null,
  });

  it("does when the file's interval lies below memory's and its server's core waited", () => {
    expect(fsyncVerdict(store('memory', 20_000, 24_000, 1), store('file', 3000, 4000, 0.3))).toMatch(
      /^fsync dominates: .*3,000-4,000 .* 20,000-24,000 .* 30 % busy/,
    );
  });

  it('does not when the intervals overlap, or when the file store kept its core busy', () => {
    expect(fsyncVerdict(store('memory', 20_000, 24_000, 1), store('file', 19_000, 21_000, 1))).toMatch(
      /^fsync does not dominate: .*no difference shown/,
    );
    expect(fsyncVerdict(store('memory', 20_000, 24_000, 1), store('file', 10_000, 12_000, 0.95))).toMatch(
      /^the file store is slower than memory but CPU-bound/,
    );
  });

  it("is said under the summary's table, which names a skipped store's reason", () => {
    const skipped: RevokeStoreResult = {
      ...store('memory', 1, 2, 1),
      store: 'redis',
      rounds: [],
      rps: null,
      skipped: 'redis-server is not installed (`apt-get install redis-server`)',
    };
    const section = revokeSection({
      connections: 1,
      concurrency: 50,
      stores: [store('memory', 20_000, 24_000, 1), store('file', 3000, 4000, 0.3), skipped],
      fsync: 'fsync dominates: x',
    });
    expect(section).toContain('| file | 3500 (3000-4000) |');
    expect(section).toContain('| redis | skipped: redis-server is not installed');
    expect(section).toContain('- fsync dominates: x.');
  });

  it("says when ghz set memory's pace, and nothing without an interval on both sides", () => {
    expect(fsyncVerdict(store('memory', 20_000, 24_000, 0.3, 0.95), store('file', 3000, 4000, 0.3))).toMatch(/ghz was the limit in memory/);
    const noInterval = { ...store('file', 3000, 4000, 0.3), rps: { median: 3500, low: null, high: null, n: 3 } };
    expect(fsyncVerdict(store('memory', 20_000, 24_000, 1), noInterval)).toBeNull();
    expect(fsyncVerdict(undefined, store('file', 3000, 4000, 0.3))).toBeNull();
  });
});

const ghzBinary = findOnPath('ghz') ?? findGoTool(GO_TOOLS.ghz);
describe.skipIf(ghzBinary === null || !existsSync(repoPath('dist', 'src', 'bin', 'jwt-grpc.js')))(
  'RevokeJwt throughput, one short round per store',
  () => {
    it('revokes a new jti with every OK call: the file grows by one line per answer; Redis where it is installed', {
      timeout: 60_000,
    }, async () => {
      const plan = planCores(null, [0], false); // unpinned: the test must not take a core from the machine's other work
      const prepared = await prepareRowAssets(new Set(['revocations', 'redis']), ['HS256'], plan, plan.single.loadCpus);
      const keys = writeKeysFile(['HS256']);
      const scratchDir = mkdtempSync(join(tmpdir(), 'bench-revoke-scratch-'));
      try {
        const missing = prepared.missing.get('redis');
        const result = await measureRevokeThroughput({
          ghz: ghzBinary as string,
          plan,
          keysFile: keys.path,
          assets: prepared.assets,
          missing: new Map(missing === undefined ? [] : [['redis', missing]]),
          scratchDir,
          durationS: 0.3,
          warmupS: 0,
          rounds: 1,
          log: () => undefined,
        });
        expect(result.stores.map((s) => s.store)).toEqual(['memory', 'file', 'redis']);
        for (const s of result.stores) {
          if (s.store === 'redis' && findRedisServer() === null) {
            expect(s.skipped).toMatch(/redis-server is not installed/);
            continue;
          }
          expect(s.error, s.store).toBeNull();
          expect(s.rounds[0]?.ok, s.store).toBeGreaterThan(0);
          expect(s.rounds[0]?.nonOk, s.store).toBe(0);
        }
        const file = result.stores.find((s) => s.store === 'file')?.rounds[0];
        expect(file?.linesAppended).toBe(file?.ok);
        // A round without an interval says nothing about fsync.
        expect(result.fsync).toBeNull();
        // The admin secret reaches neither the results nor the summary.
        const secret = prepared.assets.revocations?.adminToken as string;
        expect(secret.length).toBeGreaterThanOrEqual(16);
        expect(JSON.stringify(result)).not.toContain(secret);
        const section = revokeSection(result);
        expect(section).not.toContain(secret);
        expect(section).toMatch(/\| memory \| \d+ \(n=1, no interval\) \|/);
      } finally {
        await prepared.close();
        keys.remove();
        rmSync(scratchDir, { recursive: true, force: true });
      }
    });
  },
);

describe("the OTLP sink's CPU", () => {
  it('is the load side\'s, taken out of "other processes" (the ⊘ share)', () => {
    const cpu = { serverCpuSeconds: 1, ghzCpuSeconds: 0.8, foreignCpuShare: 0.08, serverStealShare: 0, stealShare: 0 };
    // 0.1 s of the sink's CPU over 2 CPUs x 5 s: 1 % of the capacity.
    expect(withoutLoadSide(cpu, 0.1, 10).foreignCpuShare).toBeCloseTo(0.07);
    expect(withoutLoadSide(cpu, 2, 10).foreignCpuShare).toBe(0);
    expect(withoutLoadSide(cpu, 0, 10)).toBe(cpu);
  });
});

describe('h2load', () => {
  it('saturates the JWK Set with 100 HTTP/1.1 connections', () => {
    expect(saturatingArgs(9000, 5, 1).join(' ')).toBe('--h1 -c 100 -t 1 -D 5 http://127.0.0.1:9000/.well-known/jwks.json');
  });

  it('reads its report: 2xx responses are the successes', () => {
    const report = [
      'finished in 5.01s, 31660.00 req/s, 49.94MB/s',
      'requests: 158300 total, 158400 started, 158300 done, 158300 succeeded, 0 failed, 0 errored, 0 timeout',
      'status codes: 158290 2xx, 0 3xx, 10 4xx, 0 5xx',
    ].join('\n');
    expect(parseH2loadReport(report)).toEqual({ durationS: 5.01, succeeded: 158290, failed: 10 });
    expect(parseH2loadReport(report.replace('5.01s', '900.00ms'))?.durationS).toBeCloseTo(0.9);
    expect(parseH2loadReport('h2load: connection refused')).toBeNull();
  });

  it("finds the discovery port in serve's start lines", () => {
    expect(
      discoveryPort(
        'jwt-grpc listening on 127.0.0.1:4000\n  discovery: http://127.0.0.1:4123/.well-known/openid-configuration (issuer x)\n',
      ),
    ).toBe(4123);
    expect(discoveryPort('jwt-grpc listening on 127.0.0.1:4000\n')).toBeNull();
  });
});

describe('--features and --baseline-ref', () => {
  it('a feature selects its rows and cells; --servers and --cells replace them', () => {
    expect(options('--features', 'mtls-policy')).toMatchObject({
      features: ['mtls-policy'],
      servers: FEATURES['mtls-policy'].servers,
      cells: FEATURES['mtls-policy'].cells,
      jwksThroughput: false,
    });
    const both = options('--features', 'tracing,jwks-load');
    expect(both.servers).toEqual(['jwt-grpc', 'jwt-grpc-otel-1', 'jwt-grpc-otel-0.01', 'jwt-grpc-jwks-load']);
    expect(both.jwksThroughput).toBe(true);
    expect(options('--features', 'tracing', '--servers', 'jwt-grpc-otel-1', '--cells', 'single-es256-1x50')).toMatchObject({
      servers: ['jwt-grpc-otel-1'],
      cells: ['single-es256-1x50'],
    });
    // Every cell a feature names is GenerateJwt on one core, HS256 and ES256, both load shapes.
    const ids = buildScenarios(['HS256', 'ES256'], [])
      .map((s) => s.id)
      .filter((id) => FEATURES.tracing.cells.some((c) => id.includes(c)));
    expect(ids).toEqual(['single-hs256-1x50', 'single-hs256-5x250', 'single-es256-1x50', 'single-es256-5x250']);
    expect(() => options('--features', 'tracng')).toThrow(UsageError);
    // Revocation: GenerateJwt and VerifyJwt, HS256 and ES256, 1x50 on one core, and RevokeJwt on each store after the columns.
    expect(options('--features', 'revocation')).toMatchObject({
      servers: ['jwt-grpc', 'jwt-grpc-jti', 'jwt-grpc-revocation'],
      revokeThroughput: true,
      jwksThroughput: false,
    });
    const revocationIds = buildScenarios(['HS256', 'ES256'], [])
      .map((s) => s.id)
      .filter((id) => FEATURES.revocation.cells.some((c) => id.includes(c)));
    expect(revocationIds).toEqual(['single-hs256-1x50', 'single-es256-1x50', 'single-verify-hs256-1x50', 'single-verify-es256-1x50']);
    expect(options('--features', 'tracing').revokeThroughput).toBe(false);
  });

  it('--baseline-ref takes a git ref, resolved to a commit of this repository', () => {
    expect(options('--baseline-ref', 'HEAD~1').baselineRef).toBe('HEAD~1');
    expect(() => options('--baseline-ref', '--x')).toThrow(UsageError);
    expect(() => options('--baseline-ref', 'a;rm -rf b')).toThrow(UsageError);
    expect(resolveRef('HEAD').sha).toMatch(/^[0-9a-f]{40}$/);
    expect(() => resolveRef('no-such-ref-anywhere')).toThrow(/not a commit of this repository/);
  });
});

describe.skipIf(!hasOpenssl())("the benchmark's policy", () => {
  const clients = new ClientPool();
  let certs: TestCerts | null = null;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
    certs?.remove();
  });

  it("admits ghz's reference request (an algorithm, no subject) from ghz's certificate, and no other caller", async () => {
    if (certs === null) throw new Error('no certificates');
    const { caCert, serverCert, serverKey } = certs;
    const ghz = makeClientCert(certs, 'bench-ghz', `URI:${BENCH_CALLER_ID}`);
    const other = makeClientCert(certs, 'other', 'URI:spiffe://bench.jwt-grpc.test/other');
    const server = trackServer(createJwtServer({ keys: await sharedKeys(), policy: checkPolicy(benchPolicy(['HS256', 'ES256'])) }));
    const port = await server.listen('127.0.0.1:0', { key: serverKey, cert: serverCert, ca: caCert, requireClientCertificate: true });
    const as = (cert: typeof ghz) =>
      clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(caCert, cert.key, cert.cert) });
    for (const algorithm of ['HS256', 'ES256']) {
      const answer = await as(ghz).generateJwt({ algorithm });
      expect(answer.sub).toBe(BENCH_POLICY_SUBJECT);
    }
    expect(await callError(as(other).generateJwt({ algorithm: 'HS256' }))).toMatchObject({ code: status.PERMISSION_DENIED });
  });
});
