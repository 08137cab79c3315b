/**
 * The Redis revocation store against a real redis-server on loopback, two store instances
 * standing for two replicas:
 * - a revocation on replica A reaches replica B within 1 s (Pub/Sub);
 * - B cut off from Redis (a TCP relay between them dropped) misses the message and
 *   catches up when the connection is back; a message lost without any disconnection is
 *   caught by the version check within `resyncIntervalMs`;
 * - with Redis unreachable, stopped or hung, `add()` fails with
 *   ERR_REVOCATION_STORE_UNAVAILABLE within the command timeout, `up` is false, and nothing
 *   (or, for a hung Redis, everything) is stored, never half;
 * - entries expire with EX = the remaining lifetime; status-list indexes from INCRBY are
 *   unique across replicas; bad URLs fail naming the option; the password is never logged.
 * Skips, saying why, where redis-server is not installed.
 */
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectedBy } from '../../bench/kit/thrown.js';
import { REDIS_INSTALL, type RedisServer, Relay, findRedisServer, startRedisServer } from '../../bench/kit/redis.js';
import { killAll } from '../../bench/kit/launcher.js';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { JwtGrpcError } from '../../src/base/errors.js';
import type { Logger } from '../../src/base/log.js';
import { createRedisRevocationStore } from '../../src/revocation/redis-store.js';
import type { Revocation, RevocationStore } from '../../src/contracts/revocation-store.js';
import { hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';

const PASSWORD = 'pw-7f3a9c-never-logged';

/** Every line any store logged, to check the password never appears. */
const logged: string[] = [];
const logger: Logger = {
  info: (message, fields) => void logged.push(`info ${message} ${JSON.stringify(fields ?? {})}`),
  warn: (message, fields) => void logged.push(`warn ${message} ${JSON.stringify(fields ?? {})}`),
  error: (message, fields) => void logged.push(`error ${message} ${JSON.stringify(fields ?? {})}`),
};

const now = (): number => Math.floor(Date.now() / 1000);

/** A started store and the revocations it has handed over, by jti. */
interface Replica {
  readonly store: RevocationStore;
  readonly seen: Map<string, Revocation>;
}

async function replica(
  url: string,
  keyPrefix: string,
  options: { resyncIntervalMs?: number; commandTimeoutMs?: number } = {},
): Promise<Replica> {
  const store = await createRedisRevocationStore(url, {
    logger,
    keyPrefix,
    resyncIntervalMs: options.resyncIntervalMs ?? 60_000,
    ...options,
  });
  const seen = new Map<string, Revocation>();
  await store.start((revocations) => {
    for (const revocation of revocations) seen.set(revocation.jti, revocation);
  });
  return { store, seen };
}

describe('createRedisRevocationStore: options', () => {
  it.each([
    ['http://127.0.0.1:6379/0', /scheme 'http:' is not redis: or rediss:/],
    ['not a url', /not a URL/],
    ['redis://127.0.0.1:6379/zero', /the path must be a database number/],
    ['redis://127.0.0.1:6379/0/1', /the path must be a database number/],
    ['redis://127.0.0.1:6379/0?db=1', /query parameters and fragments are not read/],
    ['redis://', /no host/],
    ['', /expected redis:\/\//],
  ])('rejects %j naming the option', async (url, message) => {
    const err = await rejectedBy(JwtGrpcError, createRedisRevocationStore(url, { logger }));
    expect(err.code).toBe('ERR_INVALID_OPTION');
    expect(err.field).toBe('revocationStore');
    expect(err.message).toMatch(/^option revocationStore: /);
    expect(err.message).toMatch(message);
  });

  it('never repeats a password from a bad URL', async () => {
    const err = await rejectedBy(JwtGrpcError, createRedisRevocationStore(`redis://jwt:${PASSWORD}@127.0.0.1:6379/db`, { logger }));
    expect(err.field).toBe('revocationStore');
    expect(err.message).not.toContain(PASSWORD);
  });

  it.each([
    [{ keyPrefix: '' }, 'keyPrefix'],
    [{ keyPrefix: 'a b:' }, 'keyPrefix'],
    [{ resyncIntervalMs: 0 }, 'resyncIntervalMs'],
    [{ resyncIntervalMs: 1.5 }, 'resyncIntervalMs'],
    [{ commandTimeoutMs: 10 }, 'commandTimeoutMs'],
  ])('rejects %j', async (options, field) => {
    const err = await rejectedBy(JwtGrpcError, createRedisRevocationStore('redis://127.0.0.1:6379/0', { logger, ...options }));
    expect(err.code).toBe('ERR_INVALID_OPTION');
    expect(err.field).toBe(field);
  });
});

const redisServer = findRedisServer();
if (redisServer === null)
  console.log(
    `test/revocation/redis-store.integration.test.ts: the Redis tests skipped: redis-server not found on PATH or in /usr/bin (\`${REDIS_INSTALL}\`)`,
  );

describe.skipIf(redisServer === null)('the Redis revocation store on a real redis-server', () => {
  let redis: RedisServer;
  /** A plain client to look at what the stores wrote. */
  let inspect: ReturnType<typeof createClient>;
  const stores: RevocationStore[] = [];
  const relays: Relay[] = [];
  let prefixes = 0;
  /** A key prefix of its own per test, so tests share one Redis without seeing each other. */
  const freshPrefix = (): string => `t${++prefixes}:`;

  async function started(
    url: string,
    keyPrefix: string,
    options?: { resyncIntervalMs?: number; commandTimeoutMs?: number },
  ): Promise<Replica> {
    const r = await replica(url, keyPrefix, options);
    stores.push(r.store);
    return r;
  }

  async function relayed(): Promise<{ relay: Relay; url: string }> {
    const relay = new Relay(redis.port);
    relays.push(relay);
    const port = await relay.listen();
    return { relay, url: `redis://:${PASSWORD}@127.0.0.1:${port}/0` };
  }

  beforeAll(async () => {
    redis = await startRedisServer({ password: PASSWORD });
    inspect = createClient({ url: redis.url() });
    inspect.on('error', () => undefined);
    await inspect.connect();
  });

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await Promise.all(relays.map((relay) => relay.close()));
    if (inspect?.isOpen) inspect.destroy();
    await killAll();
  });

  it('hands a revocation made on replica A to replica B within 1 s (Pub/Sub)', async () => {
    const prefix = freshPrefix();
    // A minute between version checks: within the second, only Pub/Sub can bring it.
    const a = await started(redis.url(), prefix);
    const b = await started(redis.url(), prefix);
    expect(a.store.up && b.store.up).toBe(true);
    const revocation = { jti: 'jti-pubsub', expiresAt: now() + 300, reason: 'laptop stolen', statusIndex: 42 };
    const t0 = performance.now();
    await a.store.add(revocation);
    expect(await waitUntil(() => b.seen.has('jti-pubsub'), 1_000, 5), 'B has the revocation within 1 s').toBe(true);
    logger.info(`pubsub delivery took ${Math.round(performance.now() - t0)} ms`);
    expect(b.seen.get('jti-pubsub')).toEqual(revocation);
  });

  it('loads what is stored at start, before start() resolves', async () => {
    const prefix = freshPrefix();
    const a = await started(redis.url(), prefix);
    for (let i = 0; i < 2_500; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => a.store.add({ jti: `jti-${i + j}`, expiresAt: now() + 300 })));
    }
    const c = await started(redis.url(), prefix);
    expect(c.seen.size).toBe(2_500);
    expect(c.seen.get('jti-1234')).toEqual({ jti: 'jti-1234', expiresAt: expect.any(Number) });
  });

  it('stores each revocation with EX = its remaining lifetime, and raises the version', async () => {
    const prefix = freshPrefix();
    const a = await started(redis.url(), prefix);
    const before = Number((await inspect.get(`${prefix}version`)) ?? 0);
    await a.store.add({ jti: 'jti-ttl', expiresAt: now() + 120, reason: 'r' });
    const ttl = await inspect.ttl(`${prefix}revoked:jti-ttl`);
    expect(ttl).toBeGreaterThanOrEqual(118);
    expect(ttl).toBeLessThanOrEqual(120);
    expect(JSON.parse((await inspect.get(`${prefix}revoked:jti-ttl`))!)).toEqual({ expiresAt: expect.any(Number), reason: 'r' });
    expect(Number(await inspect.get(`${prefix}version`))).toBe(before + 1);
    // A token already past its exp is still announced, and gone a second later.
    await a.store.add({ jti: 'jti-past', expiresAt: now() - 60 });
    expect(await inspect.ttl(`${prefix}revoked:jti-past`)).toBe(1);
  });

  it('B cut off from Redis misses the message and catches up once the connection is back', async () => {
    const prefix = freshPrefix();
    const a = await started(redis.url(), prefix);
    const { relay, url } = await relayed();
    // A minute between version checks: the catch-up can only come from the reconnection.
    const b = await started(url, prefix);
    relay.cut();
    expect(await waitUntil(() => !b.store.up, 2_000), 'B reports itself not up while cut off').toBe(true);
    await a.store.add({ jti: 'jti-missed', expiresAt: now() + 300 });
    await sleep(500);
    expect(b.seen.has('jti-missed'), 'no path reaches B while cut off').toBe(false);
    relay.restore();
    const t0 = performance.now();
    // Reconnection backoff is at most 2 s (plus jitter), then one resync.
    expect(await waitUntil(() => b.seen.has('jti-missed'), 5_000), 'B catches up after the reconnection').toBe(true);
    logger.info(`catch-up after reconnection took ${Math.round(performance.now() - t0)} ms`);
    expect(await waitUntil(() => b.store.up, 2_000)).toBe(true);
    // And Pub/Sub works again on the new connections.
    await a.store.add({ jti: 'jti-after', expiresAt: now() + 300 });
    expect(await waitUntil(() => b.seen.has('jti-after'), 1_000, 5)).toBe(true);
  });

  it('a message lost without a disconnection is caught by the version check within resyncIntervalMs', async () => {
    const prefix = freshPrefix();
    const n = 500;
    const b = await started(redis.url(), prefix, { resyncIntervalMs: n });
    // Another writer's SET and INCR whose PUBLISH never arrived.
    await inspect
      .multi()
      .set(`${prefix}revoked:jti-lost`, JSON.stringify({ expiresAt: now() + 300 }), { EX: 300 })
      .incr(`${prefix}version`)
      .exec();
    const t0 = performance.now();
    expect(await waitUntil(() => b.seen.has('jti-lost'), n + 1_000), `B finds it within N = ${n} ms (+ slack)`).toBe(true);
    logger.info(`catch-up by version check took ${Math.round(performance.now() - t0)} ms`);
    // A value it cannot read still names a revoked jti: kept, for as long as the key lives.
    await inspect.multi().set(`${prefix}revoked:jti-garbled`, 'not json', { EX: 300 }).incr(`${prefix}version`).exec();
    expect(await waitUntil(() => b.seen.has('jti-garbled'), n + 1_000)).toBe(true);
    expect(b.seen.get('jti-garbled')!.expiresAt).toBeGreaterThan(now() + 290);
  });

  it('revocations heard during a rescan count toward the version: no second rescan follows', async () => {
    const prefix = freshPrefix();
    const a = await started(redis.url(), prefix);
    for (let i = 0; i < 6_000; i += 1_000) {
      await Promise.all(Array.from({ length: 1_000 }, (_, j) => a.store.add({ jti: `jti-${i + j}`, expiresAt: now() + 300 })));
    }
    const scans = async (): Promise<number> => Number(/cmdstat_scan:calls=(\d+)/.exec(await inspect.info('commandstats'))?.[1] ?? 0);
    // B's first scan reads the counter, then 6,000 keys; A revokes all the while, up to 2,000
    // times: the store remembers at most 10,000 versions heard ahead of a gap and rescans past
    // that, by design, so a scan slowed by a busy machine must not let A exceed it.
    let adding = true;
    const during = (async () => {
      for (let i = 0; adding && i < 2_000; i++) await a.store.add({ jti: `jti-during-${i}`, expiresAt: now() + 300 });
    })();
    const b = await started(redis.url(), prefix, { resyncIntervalMs: 100 });
    const before = await scans();
    adding = false;
    await during;
    await sleep(1_200);
    expect(await scans(), 'SCANs in the version checks after the first load').toBe(before);
    expect(b.seen.size).toBe(a.seen.size);
  });

  it('with Redis unreachable: add fails UNAVAILABLE at once, up is false, nothing is stored', async () => {
    const prefix = freshPrefix();
    const { relay, url } = await relayed();
    const a = await started(url, prefix);
    const b = await started(redis.url(), prefix);
    const version = await inspect.get(`${prefix}version`);
    relay.cut();
    expect(await waitUntil(() => !a.store.up, 2_000)).toBe(true);
    const t0 = performance.now();
    const err = await rejectedBy(JwtGrpcError, a.store.add({ jti: 'jti-down', expiresAt: now() + 300 }));
    expect(performance.now() - t0, 'fails at once, with no offline queue').toBeLessThan(500);
    expect(err.code).toBe('ERR_REVOCATION_STORE_UNAVAILABLE');
    // The option that chose the store, as the file store names `revocations`: one unavailable() for both.
    expect(err.field).toBe('revocationStore');
    expect(err.message).not.toContain(PASSWORD);
    expect((await rejectedBy(JwtGrpcError, a.store.reserveStatusIndexes!(1))).code).toBe('ERR_REVOCATION_STORE_UNAVAILABLE');
    relay.restore();
    expect(await waitUntil(() => a.store.up, 5_000), 'A is up again once Redis is reachable').toBe(true);
    // The failed revocation was not queued for later: nothing stored, the counter untouched, nobody told.
    await sleep(300);
    expect(await inspect.exists(`${prefix}revoked:jti-down`)).toBe(0);
    expect(await inspect.get(`${prefix}version`)).toBe(version);
    expect(b.seen.has('jti-down')).toBe(false);
    await a.store.add({ jti: 'jti-up-again', expiresAt: now() + 300 });
    expect(await waitUntil(() => b.seen.has('jti-up-again'), 1_000, 5)).toBe(true);
  });

  it('with Redis hung: add fails UNAVAILABLE after commandTimeoutMs; afterwards it is all or nothing, never half', async () => {
    const own = await startRedisServer({ password: PASSWORD });
    try {
      const prefix = freshPrefix();
      const a = await started(own.url(), prefix, { commandTimeoutMs: 300, resyncIntervalMs: 500 });
      const b = await started(own.url(), prefix, { resyncIntervalMs: 500 });
      own.process.pause();
      const t0 = performance.now();
      const err = await rejectedBy(JwtGrpcError, a.store.add({ jti: 'jti-hung', expiresAt: now() + 300 }));
      const waited = performance.now() - t0;
      expect(err.code).toBe('ERR_REVOCATION_STORE_UNAVAILABLE');
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(1_500);
      expect(a.store.up, 'a timed-out command marks the store stale').toBe(false);
      own.process.resume();
      // The script reached Redis before it hung: it runs whole on resumption (entry, counter and message together).
      const check = createClient({ url: own.url() });
      check.on('error', () => undefined);
      await check.connect();
      try {
        const stored = await check.exists(`${prefix}revoked:jti-hung`);
        expect(Number(await check.get(`${prefix}version`))).toBe(stored);
        if (stored === 1) expect(await waitUntil(() => b.seen.has('jti-hung'), 1_000)).toBe(true);
      } finally {
        check.destroy();
      }
      expect(await waitUntil(() => a.store.up, 3_000), 'A is up again after a resync').toBe(true);
    } finally {
      own.process.resume();
      await own.stop();
    }
  });

  it('with Redis stopped and started again: UNAVAILABLE meanwhile, then up with memory kept', async () => {
    const own = await startRedisServer({ password: PASSWORD });
    const prefix = freshPrefix();
    const a = await started(own.url(), prefix);
    await a.store.add({ jti: 'jti-before-stop', expiresAt: now() + 300 });
    expect(await waitUntil(() => a.seen.has('jti-before-stop'), 1_000)).toBe(true);
    await own.stop();
    expect(await waitUntil(() => !a.store.up, 2_000)).toBe(true);
    const t0 = performance.now();
    expect((await rejectedBy(JwtGrpcError, a.store.add({ jti: 'jti-stopped', expiresAt: now() + 300 }))).code).toBe(
      'ERR_REVOCATION_STORE_UNAVAILABLE',
    );
    expect(performance.now() - t0).toBeLessThan(500);
    const again = await startRedisServer({ password: PASSWORD, port: own.port });
    try {
      expect(await waitUntil(() => a.store.up, 5_000), 'up again on the restarted Redis').toBe(true);
      // Redis came back empty; memory still holds what it had.
      expect(a.seen.has('jti-before-stop')).toBe(true);
      await a.store.add({ jti: 'jti-restarted', expiresAt: now() + 300 });
    } finally {
      await again.stop();
    }
  });

  it('start() fails UNAVAILABLE, naming the target without its password, when nothing listens', async () => {
    const { relay, url } = await relayed();
    relay.cut();
    const store = await createRedisRevocationStore(url, { logger });
    const t0 = performance.now();
    const err = await rejectedBy(
      JwtGrpcError,
      store.start(() => undefined),
    );
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(err.code).toBe('ERR_REVOCATION_STORE_UNAVAILABLE');
    expect(err.message).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+\/0 is unavailable: /);
    expect(err.message).not.toContain(PASSWORD);
    expect(store.up).toBe(false);
    await store.close();
  });

  it.skipIf(!hasOpenssl())('connects over TLS (rediss://), checking the server certificate', async () => {
    const certs = makeTestCerts();
    const own = await startRedisServer({ password: PASSWORD, tls: { certFile: certs.files.serverCert, keyFile: certs.files.serverKey } });
    const defaults = getCACertificates('default');
    try {
      const prefix = freshPrefix();
      // The test CA not trusted yet: the store refuses the server.
      const untrusted = await createRedisRevocationStore(own.url(), { logger, keyPrefix: prefix });
      const refused = await rejectedBy(
        JwtGrpcError,
        untrusted.start(() => undefined),
      );
      expect(refused.code).toBe('ERR_REVOCATION_STORE_UNAVAILABLE');
      expect(refused.message).toMatch(/certificate/);
      expect(refused.message).not.toContain(PASSWORD);
      // Trusted as NODE_EXTRA_CA_CERTS would: revocations travel over TLS.
      setDefaultCACertificates([...defaults, certs.caCert.toString()]);
      const a = await started(own.url(), prefix);
      const b = await started(own.url(), prefix);
      await a.store.add({ jti: 'jti-tls', expiresAt: now() + 300 });
      expect(await waitUntil(() => b.seen.has('jti-tls'), 1_000, 5)).toBe(true);
      await a.store.close();
      await b.store.close();
    } finally {
      setDefaultCACertificates(defaults);
      await own.stop();
      certs.remove();
    }
  });

  it('allocates status-list indexes with INCRBY, unique across replicas', async () => {
    const prefix = freshPrefix();
    const a = await started(redis.url(), prefix);
    const b = await started(redis.url(), prefix);
    const firsts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).store.reserveStatusIndexes!(7)));
    const taken = firsts.flatMap((first) => Array.from({ length: 7 }, (_, k) => first + k)).sort((x, y) => x - y);
    expect(taken).toEqual(Array.from({ length: 140 }, (_, i) => i));
    expect((await rejectedBy(JwtGrpcError, a.store.reserveStatusIndexes!(0))).code).toBe('ERR_INVALID_REQUEST');
  });

  it('closes idempotently, and refuses revocations afterwards', async () => {
    const a = await replica(redis.url(), freshPrefix());
    await a.store.close();
    await a.store.close();
    expect(a.store.up).toBe(false);
    expect((await rejectedBy(JwtGrpcError, a.store.add({ jti: 'jti-closed', expiresAt: now() + 300 }))).code).toBe(
      'ERR_REVOCATION_STORE_UNAVAILABLE',
    );
  });

  it('never logged the password, and said when a connection was lost', () => {
    expect(logged.some((line) => line.includes('lost the Redis connection'))).toBe(true);
    expect(logged.filter((line) => line.includes(PASSWORD))).toEqual([]);
  });
});
