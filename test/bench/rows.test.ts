/**
 * The opt-in rows of the benchmark (mutual TLS with and without a policy, tracing, a
 * background JWKS load, another commit's build) and their selection: ghz's and h2load's
 * arguments, each row's `serve` command, `--features` and `--baseline-ref`, and, over real
 * mutual TLS, that the benchmark's policy admits ghz's reference GenerateJwt request.
 */
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../bench/common/program.js';
import { ghzArgs } from '../../bench/ghz/ghz-args.js';
import { makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { backgroundLoadArgs, discoveryPort } from '../../bench/macro/background-load.js';
import { resolveRef } from '../../bench/macro/baseline.js';
import { withoutLoadSide } from '../../bench/macro/column.js';
import { COMPARISONS, pickPair } from '../../bench/macro/comparisons.js';
import { FEATURES } from '../../bench/macro/features.js';
import { parseH2loadReport, saturatingArgs } from '../../bench/macro/jwks-throughput.js';
import type { ServerStatus } from '../../bench/macro/results.js';
import { BENCH_CALLER_ID, BENCH_POLICY_SUBJECT, NO_ASSETS, type RowAssets, benchPolicy } from '../../bench/macro/row-assets.js';
import { selectServers } from '../../bench/macro/run.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import { SERVERS, SERVER_NAMES, type ServerSpec, baselineServer } from '../../bench/macro/servers.js';
import { parseCommandLine } from '../../bench/options/parse.js';
import type { BenchOptions } from '../../bench/options/types.js';
import { checkPolicy, createJwtServer } from '../../src/lib.js';
import { ClientPool, callError } from '../helpers/client.js';
import { closeAllServers, sharedKeys, trackServer } from '../helpers/server.js';

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

describe('ghz over mutual TLS', () => {
  const call = { method: 'GenerateJwt', data: { algorithm: 'HS256' }, connections: 1, concurrency: 50, durationS: 1, cpus: 1, port: 5, output: '/o.json', name: 'n' } as const;

  it('dials plaintext without tls, and with it presents the client certificate and checks the server name', () => {
    expect(ghzArgs(call)).toContain('--insecure');
    const args = ghzArgs({ ...call, tls: ASSETS.tls?.client });
    expect(args).not.toContain('--insecure');
    expect(args.join(' ')).toContain('--cacert /c/ca.crt --cert /c/ghz.crt --key /c/ghz.key --cname localhost');
  });
});

describe('the opt-in rows', () => {
  it('serve mutual TLS, the policy row adding --policy; each needs the run\'s certificates', () => {
    const plain = row('jwt-grpc-mtls').launch({ ...CTX, assets: ASSETS }).args.join(' ');
    expect(plain).toContain('--tls-cert /c/server.crt --tls-key /c/server.key --tls-client-ca /c/ca.crt');
    expect(plain).not.toContain('--policy');
    const withPolicy = row('jwt-grpc-mtls-policy').launch({ ...CTX, assets: ASSETS }).args.join(' ');
    expect(withPolicy).toContain('--tls-client-ca /c/ca.crt --policy /c/policy.json');
    expect(() => row('jwt-grpc-mtls').launch(CTX)).toThrow(/without the run's row assets/);
    expect(() => row('jwt-grpc-mtls').launch({ ...CTX, assets: NO_ASSETS })).toThrow(/test certificates was not prepared/);
    expect(row('jwt-grpc-mtls-policy').needs).toEqual(['mtls']);
  });

  it('trace with the ratio sampler at 1.0 and 0.01, exporting to the run\'s sink', () => {
    for (const [name, ratio] of [['jwt-grpc-otel-1', '1.0'], ['jwt-grpc-otel-0.01', '0.01']] as const) {
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

  it('run another commit\'s CLI as jwt-grpc@REF, with the flags of jwt-grpc', () => {
    const baseline = baselineServer('abc1234', '/tmp/x/dist/src/bin/jwt-grpc.js');
    expect(baseline.name).toBe('jwt-grpc@abc1234');
    const launch = baseline.launch(CTX);
    expect(launch.args[launch.args.indexOf('/tmp/x/dist/src/bin/jwt-grpc.js') + 1]).toBe('serve');
    expect(launch.args.slice(1)).toEqual(row('jwt-grpc').launch(CTX).args.slice(1).map((a) => (a.endsWith('jwt-grpc.js') ? '/tmp/x/dist/src/bin/jwt-grpc.js' : a)));
  });

  it('run only when named: no profile selects them', () => {
    const optIn = SERVERS.filter((s) => s.optIn === true).map((s) => s.name);
    expect(optIn.sort()).toEqual(['jwt-grpc-jwks-load', 'jwt-grpc-mtls', 'jwt-grpc-mtls-policy', 'jwt-grpc-otel-0.01', 'jwt-grpc-otel-1']);
    for (const scope of ['all', 'ratios', 'one-per-kind'] as const) {
      expect(selectServers(SERVERS, { servers: null, scope }).filter((s) => optIn.includes(s.name))).toEqual([]);
    }
    expect(selectServers(SERVERS, { servers: ['jwt-grpc-mtls'], scope: 'all' }).map((s) => s.name)).toEqual(['jwt-grpc-mtls']);
  });

  it('enter their named comparisons', () => {
    const status = (name: string, role: ServerStatus['role'] = 'variant'): ServerStatus => ({
      name, label: name, role, stack: 'own HTTP/2', description: '', cluster: false, usesAllCores: false, skipped: null,
    });
    const [scenario] = buildScenarios(['HS256'], []);
    const column = [status('jwt-grpc', 'ours'), status('jwt-grpc-mtls'), status('jwt-grpc-mtls-policy'), status('jwt-grpc-otel-1'), status('jwt-grpc-otel-0.01'), status('jwt-grpc-jwks-load'), status('jwt-grpc@abc1234')];
    const pair = (id: string): string[] => {
      const found = pickPair(COMPARISONS.find((c) => c.id === id) as (typeof COMPARISONS)[number], column, scenario as NonNullable<typeof scenario>);
      return found === null ? [] : [found.subject.name, found.baseline.name];
    };
    expect(pair('mtls-policy')).toEqual(['jwt-grpc-mtls-policy', 'jwt-grpc-mtls']);
    expect(pair('tracing-1')).toEqual(['jwt-grpc-otel-1', 'jwt-grpc']);
    expect(pair('tracing-0.01')).toEqual(['jwt-grpc-otel-0.01', 'jwt-grpc']);
    expect(pair('jwks-load')).toEqual(['jwt-grpc-jwks-load', 'jwt-grpc']);
    expect(pair('baseline-ref')).toEqual(['jwt-grpc', 'jwt-grpc@abc1234']);
  });
});

describe('the OTLP sink\'s CPU', () => {
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

  it('finds the discovery port in serve\'s start lines', () => {
    expect(discoveryPort('jwt-grpc listening on 127.0.0.1:4000\n  discovery: http://127.0.0.1:4123/.well-known/openid-configuration (issuer x)\n')).toBe(4123);
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
    const ids = buildScenarios(['HS256', 'ES256'], []).map((s) => s.id).filter((id) => FEATURES.tracing.cells.some((c) => id.includes(c)));
    expect(ids).toEqual(['single-hs256-1x50', 'single-hs256-5x250', 'single-es256-1x50', 'single-es256-5x250']);
    expect(() => options('--features', 'tracng')).toThrow(UsageError);
  });

  it('--baseline-ref takes a git ref, resolved to a commit of this repository', () => {
    expect(options('--baseline-ref', 'HEAD~1').baselineRef).toBe('HEAD~1');
    expect(() => options('--baseline-ref', '--x')).toThrow(UsageError);
    expect(() => options('--baseline-ref', 'a;rm -rf b')).toThrow(UsageError);
    expect(resolveRef('HEAD').sha).toMatch(/^[0-9a-f]{40}$/);
    expect(() => resolveRef('no-such-ref-anywhere')).toThrow(/not a commit of this repository/);
  });
});

describe.skipIf(!hasOpenssl())('the benchmark\'s policy', () => {
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

  it('admits ghz\'s reference request (an algorithm, no subject) from ghz\'s certificate, and no other caller', async () => {
    if (certs === null) throw new Error('no certificates');
    const { caCert, serverCert, serverKey } = certs;
    const ghz = makeClientCert(certs, 'bench-ghz', `URI:${BENCH_CALLER_ID}`);
    const other = makeClientCert(certs, 'other', 'URI:spiffe://bench.jwt-grpc.test/other');
    const server = trackServer(createJwtServer({ keys: await sharedKeys(), policy: checkPolicy(benchPolicy(['HS256', 'ES256'])) }));
    const port = await server.listen('127.0.0.1:0', { key: serverKey, cert: serverCert, ca: caCert, requireClientCertificate: true });
    const as = (cert: typeof ghz) => clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(caCert, cert.key, cert.cert) });
    for (const algorithm of ['HS256', 'ES256']) {
      const answer = await as(ghz).generateJwt({ algorithm });
      expect(answer.sub).toBe(BENCH_POLICY_SUBJECT);
    }
    expect(await callError(as(other).generateJwt({ algorithm: 'HS256' }))).toMatchObject({ code: status.PERMISSION_DENIED });
  });
});
