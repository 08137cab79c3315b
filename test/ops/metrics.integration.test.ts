/**
 * `/metrics` (`--metrics-port`, the `metricsPort` option): calls counted exactly by
 * method and status code on each transport, in one process and in a cluster (where the primary serves the
 * sum over its workers), the service's own counts, the process's metrics, and nothing
 * served unless asked.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { writeKeysFile } from '../../bench/harness/keys-file.js';
import { killAll } from '../../bench/kit/launcher.js';
import { createJwtServer, generateKeys } from '../../src/lib/index.js';
import { ClientPool, callError, type JwtClient } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';
import { bannerMetricsPort, clientsOnOwnConnections, httpGet, parseMetrics, scrape, valueOf } from './helpers.js';

const clients = new ClientPool();
const keysFile = writeKeysFile(['HS256', 'ES256']);

afterEach(async () => {
  clients.closeAll();
  await killAll();
});

afterAll(() => keysFile.remove());

const SERVICE = 'jwt.services.JwtService';
const method = (name: string): Record<string, string> => ({ grpc_type: 'unary', grpc_service: SERVICE, grpc_method: name });

/** N OK and M INVALID_ARGUMENT GenerateJwt calls, V VerifyJwt calls (valid, then expired... by reason), J GetJwks, spread over `clients`. */
async function traffic(pool: readonly JwtClient[], counts: { ok: number; invalid: number; verify: number; jwks: number }) {
  const at = (i: number): JwtClient => pool[i % pool.length] as JwtClient;
  const tokens: { kid: string; jwt: string }[] = [];
  for (let i = 0; i < counts.ok; i++)
    tokens.push(await at(i).generateJwt({ algorithm: i % 2 === 0 ? 'HS256' : 'ES256', subject: `m${i}@example.com` }));
  for (let i = 0; i < counts.invalid; i++) {
    expect((await callError(at(i).generateJwt({ algorithm: 'XX999', subject: 's' }))).code).toBe(3);
  }
  let valid = 0;
  for (let i = 0; i < counts.verify; i++) {
    const token = (tokens[i % tokens.length] as { jwt: string }).jwt;
    // Every third token tampered: BAD_SIGNATURE.
    const response = await at(i).verifyJwt({ jwt: i % 3 === 2 ? `${token.slice(0, -4)}AAAA` : token });
    if (response.valid) valid += 1;
  }
  for (let i = 0; i < counts.jwks; i++) await at(i).getJwks();
  return { tokens, valid };
}

for (const [transport, workers] of TRANSPORTS.flatMap((t) => [1, 2].map((n) => [t, n] as const))) {
  const mode = `${transport}, ${workers === 1 ? 'single process' : `cluster of ${workers}`}`;
  it(`${mode}: counts calls exactly by method and code, tokens by kid, verifications by reason`, async () => {
    const args = serveArgs(...transportArgs(transport), '--keys', keysFile.path, '--metrics-port', '0', '--verify-cache', '0');
    const cli = await startCli(args, { env: { NODEMAXPROCS: String(workers) } });
    const port = bannerMetricsPort(cli.stdout);
    const counts = { ok: 24, invalid: 7, verify: 12, jwks: 5 };
    const { tokens, valid } = await traffic(clientsOnOwnConnections(clients, cli.port, 4), counts);
    const samples = await scrape(port);

    expect(valueOf(samples, 'grpc_server_started_total', method('GenerateJwt'))).toBe(counts.ok + counts.invalid);
    expect(valueOf(samples, 'grpc_server_handled_total', { ...method('GenerateJwt'), grpc_code: 'OK' })).toBe(counts.ok);
    expect(valueOf(samples, 'grpc_server_handled_total', { ...method('GenerateJwt'), grpc_code: 'INVALID_ARGUMENT' })).toBe(counts.invalid);
    expect(valueOf(samples, 'grpc_server_handled_total', { ...method('VerifyJwt'), grpc_code: 'OK' })).toBe(counts.verify);
    expect(valueOf(samples, 'grpc_server_handled_total', { ...method('GetJwks'), grpc_code: 'OK' })).toBe(counts.jwks);
    expect(
      samples
        .filter((s) => s.name === 'grpc_server_handled_total')
        .map((s) => `${s.labels['grpc_method']} ${s.labels['grpc_code']}`)
        .sort(),
    ).toEqual(['GenerateJwt INVALID_ARGUMENT', 'GenerateJwt OK', 'GetJwks OK', 'VerifyJwt OK']);
    // The histogram counts the same calls; its +Inf bucket equals its count.
    const okGenerate = { ...method('GenerateJwt'), grpc_code: 'OK' };
    expect(valueOf(samples, 'grpc_server_handling_seconds_count', okGenerate)).toBe(counts.ok);
    expect(valueOf(samples, 'grpc_server_handling_seconds_bucket', { ...okGenerate, le: '+Inf' })).toBe(counts.ok);
    expect(valueOf(samples, 'grpc_server_handling_seconds_sum', okGenerate)).toBeGreaterThan(0);

    for (const kid of new Set(tokens.map((t) => t.kid))) {
      expect(valueOf(samples, 'jwt_grpc_tokens_issued_total', { kid }), kid).toBe(tokens.filter((t) => t.kid === kid).length);
    }
    expect(valueOf(samples, 'jwt_grpc_verifications_total', { result: 'valid', reason: 'none' })).toBe(valid);
    expect(valueOf(samples, 'jwt_grpc_verifications_total', { result: 'invalid', reason: 'BAD_SIGNATURE' })).toBe(counts.verify - valid);
    for (const kid of new Set(tokens.map((t) => t.kid))) {
      expect(valueOf(samples, 'jwt_grpc_keys', { kid, role: 'active' }), `${kid} loaded once`).toBe(1);
    }
    expect(valueOf(samples, 'jwt_grpc_key_reloads_total')).toBe(0);
    expect(valueOf(samples, 'jwt_grpc_key_reload_failures_total')).toBe(0);
    // prom-client's process and Node.js metrics.
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(
        samples.some((s) => s.name === name),
        name,
      ).toBe(true);
    }
    // A second scrape after more calls counts them on top.
    await traffic(clientsOnOwnConnections(clients, cli.port, 2), { ok: 2, invalid: 1, verify: 0, jwks: 0 });
    const after = await scrape(port);
    expect(valueOf(after, 'grpc_server_handled_total', okGenerate)).toBe(counts.ok + 2);
    expect(valueOf(after, 'grpc_server_handled_total', { ...method('GenerateJwt'), grpc_code: 'INVALID_ARGUMENT' })).toBe(
      counts.invalid + 1,
    );
  }, 60_000);
}

it('serves Prometheus text at GET /metrics only, and nothing without --metrics-port', async () => {
  const off = await startCli(serveArgs('--keys', keysFile.path));
  expect(off.stdout).not.toContain('metrics:');
  const cli = await startCli(serveArgs('--keys', keysFile.path, '--metrics-port', '0'));
  const port = bannerMetricsPort(cli.stdout);
  const response = await httpGet(port);
  expect(response.status).toBe(200);
  expect(response.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(response.body).toContain('# TYPE grpc_server_handling_seconds histogram');
  expect((await httpGet(port, '/')).status).toBe(404);
}, 30_000);

describe.each(TRANSPORTS)('the library, transport %s', (transport) => {
  it('createJwtServer({ metricsPort }) serves them; metricsRegistry counts into a registry of your own', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    await using served = createJwtServer({ transport, keys, metricsPort: 0, health: false, reflection: false });
    const grpcPort = await served.listen('127.0.0.1:0');
    expect(served.metricsPort).toBeGreaterThan(0);
    await clients.jwt(grpcPort).generateJwt({ algorithm: 'HS256', subject: 'lib@example.com' });
    expect(
      valueOf(await scrape(served.metricsPort as number), 'grpc_server_handled_total', { grpc_method: 'GenerateJwt', grpc_code: 'OK' }),
    ).toBe(1);

    const registry = new Registry();
    await using own = createJwtServer({ transport, keys, metricsRegistry: registry, health: false, reflection: false });
    const ownPort = await own.listen('127.0.0.1:0');
    expect(own.metricsPort).toBeUndefined();
    await clients.jwt(ownPort).generateJwt({ algorithm: 'HS256', subject: 'own@example.com' });
    const samples = parseMetrics(await registry.metrics());
    expect(valueOf(samples, 'grpc_server_handled_total', { grpc_method: 'GenerateJwt', grpc_code: 'OK' })).toBe(1);
    // Your registry, your process metrics: none are added to it.
    expect(samples.some((s) => s.name.startsWith('process_'))).toBe(false);
    expect(() => createJwtServer({ keys, metricsRegistry: {} as Registry })).toThrow(/metricsRegistry: must be a prom-client Registry/);
  });
});
