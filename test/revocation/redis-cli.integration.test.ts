/**
 * The Redis revocation store through the CLI, against a real redis-server on loopback:
 * two `jwt-grpc serve --revocation-store redis://...` replicas with the same keys, and a
 * cluster of two workers beside them (its primary owns the store).
 * - RevokeJwt on A: VerifyJwt on B says REVOKED within 1 s, and B's status list marks it;
 * - B cut off Redis (a TCP relay between them dropped), a revocation on A, the relay back:
 *   B says REVOKED within the reconnection bound of docs/revocation-redis.md;
 * - status-list indexes come from one Redis counter: no two replicas share one;
 * - Redis stopped: RevokeJwt answers UNAVAILABLE and revokes nothing, VerifyJwt answers
 *   from memory, `jwt_grpc_revocation_store_up{store="redis"}` is 0.
 * Skips, saying why, where redis-server is not installed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_INSTALL, type RedisServer, Relay, findRedisServer, startRedisServer } from '../../bench/kit/redis.js';
import { type CliServer, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { waitUntil } from '../../bench/kit/wait.js';
import { CallMetadata } from '../../src/lib/index.js';
import { ClientPool, type JwtClient, decodeJwt } from '../../bench/kit/grpc-clients.js';

const HAVE_REDIS = findRedisServer() !== null;
if (!HAVE_REDIS) console.warn(`skipping the Redis CLI tests: redis-server is not installed (${REDIS_INSTALL})`);

const SECRET = 'redis-cli-admin-secret-0123456789';
const admin = { metadata: new CallMetadata().set('authorization', `Bearer ${SECRET}`) };
/** B's reconnection bound: the backoff (at most 2 s plus 100 ms of jitter) and one rescan. */
const RESYNC_BOUND_MS = 5_000;

const clients = new ClientPool();
let channels = 0;
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-redis-cli-'));
let redis: RedisServer;
let relay: Relay;
let a: CliServer;
let b: CliServer;

/** A client on a connection of its own (in a cluster, node:cluster hands each to the next worker). */
function fresh(port: number): JwtClient {
  channels += 1;
  return clients.jwt(port, { channelOptions: { 'grpc.primary_user_agent': `redis-cli-test-${channels}` } });
}

const issue = async (port: number): Promise<string> => (await fresh(port).generateJwt({ algorithm: 'ES256', subject: 'ada' })).jwt;
const statusIndex = (token: string): number => (decodeJwt(token).payload['status'] as { status_list: { idx: number } }).status_list.idx;

/** Whether the status list a server serves over GetStatusList marks `idx` (one bit per token, least significant first). */
async function listMarks(port: number, idx: number): Promise<boolean> {
  const { token } = await fresh(port).getStatusList();
  const { status_list } = decodeJwt(token).payload as { status_list: { lst: string } };
  const bits = inflateSync(Buffer.from(status_list.lst, 'base64url'));
  return (((bits[idx >> 3] as number) >> (idx & 7)) & 1) === 1;
}

/** How long until VerifyJwt on `port` says REVOKED for `token`, or undefined when it does not within `ms`. */
async function revokedWithin(port: number, token: string, ms: number): Promise<number | undefined> {
  const start = performance.now();
  const client = fresh(port);
  const seen = await waitUntil(async () => (await client.verifyJwt({ jwt: token })).reason === 'REVOKED', ms, 20);
  return seen ? performance.now() - start : undefined;
}

function replicaArgs(keysFile: string, adminFile: string, url: string, ...extra: string[]): string[] {
  return serveArgs(
    '--keys',
    keysFile,
    '--revocation-store',
    url,
    '--admin-token-file',
    adminFile,
    '--status-list',
    '--issuer',
    'https://auth.example',
    '--http-port',
    '0',
    ...extra,
  );
}

let keysFile: string;
let adminFile: string;

beforeAll(async () => {
  if (!HAVE_REDIS) return;
  keysFile = join(dir, 'keys.json');
  expect((await runCli(['keys', 'generate', '--alg', 'ES256', '--out', keysFile])).code).toBe(0);
  adminFile = join(dir, 'admin-token');
  writeFileSync(adminFile, `${SECRET}\n`, { mode: 0o600 });
  redis = await startRedisServer();
  relay = new Relay(redis.port);
  const relayPort = await relay.listen();
  a = await startCli(replicaArgs(keysFile, adminFile, redis.url(), '--metrics-port', '0'));
  // B reaches Redis through the relay, so that it alone can be cut off.
  b = await startCli(replicaArgs(keysFile, adminFile, redis.url().replace(`:${redis.port}/`, `:${relayPort}/`)));
}, 60_000);

afterAll(async () => {
  clients.closeAll();
  await relay?.close();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_REDIS)('jwt-grpc serve --revocation-store redis://, two replicas', () => {
  it('says which store it uses, with the password hidden', () => {
    expect(a.stdout).toContain(`  revocations: redis://***@127.0.0.1:${redis.port}/0; RevokeJwt for admin secret; jti on\n`);
    expect(a.stdout + a.stderr).not.toContain(redis.password);
  });

  it('a revocation on A is REVOKED on B within 1 s, and marked in both status lists', async () => {
    const token = await issue(a.port);
    expect((await fresh(b.port).verifyJwt({ jwt: token })).valid).toBe(true);
    await fresh(a.port).revokeJwt({ jwt: token, reason: 'laptop stolen' }, admin);
    expect(await revokedWithin(b.port, token, 1_000)).toBeDefined();
    expect(await listMarks(a.port, statusIndex(token))).toBe(true);
    expect(await waitUntil(() => listMarks(b.port, statusIndex(token)), 1_000)).toBe(true);
  });

  it('hands out status-list indexes from one counter: no two replicas share one', async () => {
    const tokens = await Promise.all([a.port, b.port, a.port, b.port].map((port) => issue(port)));
    const indexes = tokens.map(statusIndex);
    expect(new Set(indexes).size).toBe(indexes.length);
    // Each replica reserved its own block by INCRBY: A's and B's indexes lie in different blocks.
    const block = (idx: number): number => Math.floor(idx / 4096);
    expect(block(indexes[0] as number)).not.toBe(block(indexes[1] as number));
  });

  it('B cut off from Redis misses the message, and has the revocation once it is back', async () => {
    const token = await issue(a.port);
    relay.cut();
    await fresh(a.port).revokeJwt({ jwt: token }, admin);
    // While cut off, B still answers from memory: the token is valid there.
    expect((await fresh(b.port).verifyJwt({ jwt: token })).valid).toBe(true);
    relay.restore();
    expect(await revokedWithin(b.port, token, RESYNC_BOUND_MS)).toBeDefined();
    expect(await waitUntil(() => listMarks(b.port, statusIndex(token)), 1_000)).toBe(true);
  });

  it('a cluster of two workers shares the store: its revocations reach the replicas, theirs reach every worker', async () => {
    const cluster = await startCli(replicaArgs(keysFile, adminFile, redis.url()), { env: { NODEMAXPROCS: '2' } });
    try {
      const fromCluster = await issue(cluster.port);
      const fromA = await issue(a.port);
      // Indexes of the cluster's workers come from the same counter as the replicas'.
      expect(statusIndex(fromCluster)).toBeGreaterThan(statusIndex(fromA) - 4096);
      expect(new Set([statusIndex(fromCluster), statusIndex(fromA)]).size).toBe(2);
      await fresh(cluster.port).revokeJwt({ jwt: fromCluster }, admin);
      expect(await revokedWithin(a.port, fromCluster, 1_000)).toBeDefined();
      await fresh(a.port).revokeJwt({ jwt: fromA }, admin);
      // New connections land on both workers in turn: each says REVOKED.
      for (let i = 0; i < 4; i++) expect(await revokedWithin(cluster.port, fromA, 1_000), `connection ${i}`).toBeDefined();
      for (let i = 0; i < 4; i++) expect(await listMarks(cluster.port, statusIndex(fromA)), `list ${i}`).toBe(true);
    } finally {
      await cluster.stop();
    }
  });

  it('with Redis stopped: RevokeJwt answers UNAVAILABLE and revokes nothing, VerifyJwt answers from memory, the gauge says 0', async () => {
    const revoked = await issue(a.port);
    await fresh(a.port).revokeJwt({ jwt: revoked }, admin);
    const kept = await issue(a.port);
    await redis.stop();
    await expect(fresh(a.port).revokeJwt({ jwt: kept }, admin)).rejects.toMatchObject({
      status: 14,
      message: expect.stringMatching(/nothing was revoked/),
    });
    expect((await fresh(a.port).verifyJwt({ jwt: kept })).valid).toBe(true);
    expect((await fresh(a.port).verifyJwt({ jwt: revoked })).reason).toBe('REVOKED');
    expect(await listMarks(a.port, statusIndex(kept))).toBe(false);
    const metricsUrl = /metrics: (http:\S+)/.exec(a.stdout)?.[1] as string;
    expect(await (await fetch(metricsUrl)).text()).toMatch(/^jwt_grpc_revocation_store_up\{store="redis"\} 0$/m);
  });
});
