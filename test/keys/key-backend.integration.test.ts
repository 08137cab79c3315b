/**
 * A key that is a handle, through an artificial backend registered like PKCS#11 and KMS
 * are: it signs through GenerateJwt on both transports; a slow or dead backend answers
 * UNAVAILABLE naming the key within keyBackendTimeoutMs and never signs with another
 * key; the circuit breaker stops a retry storm and drives readiness; VerifyJwt and GetJwks
 * keep working from the cached public key; 5 ms signatures do not stall VerifyJwt.
 */
import { type KeyObject, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type Algorithm, exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';
import {
  KEY_BACKEND_BREAKER_COOLDOWN_MS,
  KEY_BACKEND_BREAKER_FAILURES,
  KEY_BACKEND_CONCURRENCY,
  KEY_BACKEND_UNAVAILABLE_MESSAGE,
  registerKeyBackend,
} from '../../src/keys/backend.js';
import { statusListAlgorithm } from '../../src/revocation/status-list/token.js';
import { callError, ClientPool } from '../../bench/kit/grpc-clients.js';
import { healthCheck } from '../../bench/kit/grpc-extras.js';
import { TRANSPORTS, closeAllServers, recordingLogger, startServer } from '../../bench/kit/jwt-servers.js';
import { sleep } from '../../bench/kit/wait.js';

/** How the fake backend behaves now; each test sets it. */
const behaviour = { delayMs: 0, fail: false, hang: false, otherKey: false, calls: 0, inFlight: 0, maxInFlight: 0 };
/** What the fake backend signs with when `otherKey` is set: a key the key file does not hold (the token's key swapped under its label). */
const OTHER_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const held = new Map<string, KeyObject>();

registerKeyBackend({
  member: 'test-hsm',
  packageName: 'none',
  async open(ref) {
    const privateKey = held.get(ref);
    if (privateKey === undefined) throw new Error(`no key ${ref}`);
    return {
      publicJwk: exportKeys(importKeys({ keys: [{ kid: 'x', alg: 'ES256', ...privateKey.export({ format: 'jwk' }) }] })).keys[0] as never,
      async sign(data) {
        behaviour.calls += 1;
        behaviour.inFlight += 1;
        behaviour.maxInFlight = Math.max(behaviour.maxInFlight, behaviour.inFlight);
        try {
          if (behaviour.hang) await new Promise(() => {});
          if (behaviour.delayMs > 0) await sleep(behaviour.delayMs);
          if (behaviour.fail) throw new Error('device unreachable');
          return cryptoSign('sha256', data, { key: behaviour.otherKey ? OTHER_KEY : privateKey, dsaEncoding: 'ieee-p1363' });
        } finally {
          behaviour.inFlight -= 1;
        }
      },
      async close() {},
    };
  },
});

/** A key file entry for a fresh P-256 key "held" by the fake backend. */
function handleEntry(kid: string, ref = kid): Record<string, unknown> & { kid: string; alg: Algorithm } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  held.set(ref, privateKey);
  return { kid, alg: 'ES256', 'test-hsm': ref, ...publicKey.export({ format: 'jwk' }) };
}

/** The warnings a server logged: where a backend's failure is told in full, the caller getting only KEY_BACKEND_UNAVAILABLE_MESSAGE. */
function warnings(logger: ReturnType<typeof recordingLogger>): string[] {
  return logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);
}

const clients = new ClientPool();
afterEach(() => {
  clients.closeAll();
  Object.assign(behaviour, { delayMs: 0, fail: false, hang: false, otherKey: false, calls: 0, inFlight: 0, maxInFlight: 0 });
});
afterAll(() => closeAllServers(0));

describe('key file entries that are handles', () => {
  it('refuse a private member, a second handle and an algorithm backends lack, naming the member', async () => {
    const entry = handleEntry('h1');
    expect(() => importKeys({ keys: [{ ...entry, d: 'AAAA' }] })).toThrow(/keys\[0\]\.d: a key held by test-hsm has no private member/);
    expect(() => importKeys({ keys: [{ ...entry, pkcs11: 'pkcs11:object=x' }] })).toThrow(/names a handle in both/);
    expect(() => importKeys({ keys: [{ ...entry, alg: 'EdDSA' }] })).toThrow(
      /keys\[0\]\.alg: a test-hsm key signs ES256, ES384, RS256, PS256/,
    );
    expect(() => importKeys({ keys: [{ ...entry, pkcs12: 'x' }] })).toThrow(/pkcs12/);
  });

  it('never sign the status list, which is re-signed synchronously: a set with only handle keys is refused it', () => {
    const keys = importKeys({ keys: [handleEntry('hsm-list')] });
    expect(() => statusListAlgorithm(keys)).toThrow(/statusList: needs an asymmetric signing key held in memory/);
  });

  it('travel to cluster workers as their reference, staged ones staying verify-only', () => {
    const keys = importKeys({ keys: [handleEntry('signs'), { ...handleEntry('staged'), key_ops: ['verify'] }] });
    const exported = exportKeys(keys, { includePrivate: true }).keys;
    expect(exported.map((key) => [key.kid, (key as Record<string, unknown>)['test-hsm'], key.key_ops])).toEqual([
      ['signs', 'signs', undefined],
      ['staged', 'staged', ['verify']],
    ]);
    expect(exported.some((key) => 'd' in key)).toBe(false);
    expect(importKeys({ keys: exported }).keys).toEqual(keys.keys);
  });
});

describe.each(TRANSPORTS)('GenerateJwt with a key held by a backend (%s)', (transport) => {
  it('signs through the backend, verifies from the cached public key, publishes it', async () => {
    const keys = importKeys({ keys: [handleEntry('hsm-1')] });
    const { port } = await startServer({ transport, keys });
    const client = clients.jwt(port);
    const issued = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    expect(issued.kid).toBe('hsm-1');
    // The signature the handle checks as it opens, then the token's.
    expect(behaviour.calls).toBe(2);
    expect((await client.verifyJwt({ jwt: issued.jwt })).valid).toBe(true);
    expect(JSON.parse((await client.getJwks()).jwks_json).keys.map((key: { kid: string }) => key.kid)).toEqual(['hsm-1']);
  });

  it('refuses to sign when the backend holds another key than the key file says', async () => {
    const entry = handleEntry('hsm-swapped');
    const other = handleEntry('elsewhere');
    const keys = importKeys({ keys: [{ ...entry, x: other['x'], y: other['y'] }] });
    const logger = recordingLogger();
    const { port } = await startServer({ transport, keys, logger });
    const failure = await callError(clients.jwt(port).generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(failure).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect(warnings(logger)).toContainEqual(
      expect.stringMatching(/key hsm-swapped \(test-hsm\) cannot sign: .*is not the public key the key file holds/),
    );
    expect(behaviour.calls).toBe(0);
  });

  it('answers UNAVAILABLE naming the key within keyBackendTimeoutMs, and never signs with the other ES256 key', async () => {
    const [memory] = exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }).keys;
    const keys = importKeys({ keys: [handleEntry('hsm-slow'), { ...memory, kid: 'in-memory' }] });
    const logger = recordingLogger();
    const { port } = await startServer({ transport, keys, keyBackendTimeoutMs: 300, logger });
    const client = clients.jwt(port);
    behaviour.hang = true;
    const started = Date.now();
    const failure = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(failure).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect(warnings(logger)).toContainEqual(
      expect.stringMatching(/key hsm-slow \(test-hsm\) cannot sign: no answer within 300 ms \(option keyBackendTimeoutMs\)/),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    // Verification and the key set need no backend.
    const [, other] = [...keys.entries()];
    expect(other?.kid).toBe('in-memory');
    expect((await client.getJwks()).jwks_json).toContain('hsm-slow');
  });

  it('opens the circuit breaker after repeated failures: refused at once, NOT_SERVING, and back after the cooldown', async () => {
    const keys = importKeys({ keys: [handleEntry('hsm-down')] });
    const logger = recordingLogger();
    const { server, port } = await startServer({ transport, keys, health: true, httpPort: 0, issuer: 'http://127.0.0.1', logger });
    const probe = async (path: string): Promise<number> => (await fetch(`http://127.0.0.1:${server.httpPort}${path}`)).status;
    expect(await probe('/readyz')).toBe(200);
    const client = clients.jwt(port);
    const signed = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    behaviour.fail = true;
    for (let i = 0; i < KEY_BACKEND_BREAKER_FAILURES; i += 1) {
      expect((await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }))).details).toBe(KEY_BACKEND_UNAVAILABLE_MESSAGE);
    }
    expect(warnings(logger).filter((line) => line.endsWith('device unreachable'))).toHaveLength(KEY_BACKEND_BREAKER_FAILURES);
    const calls = behaviour.calls;
    const refused = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(refused).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect(warnings(logger).at(-1)).toMatch(/key hsm-down \(test-hsm\) cannot sign: .*circuit breaker/);
    expect(behaviour.calls).toBe(calls);
    expect(await healthCheck(port, 'jwt.services.JwtService')).toBe('NOT_SERVING');
    expect([await probe('/readyz'), await probe('/healthz')]).toEqual([503, 200]);
    // Tokens signed before still verify: the cached public key is enough.
    expect((await client.verifyJwt({ jwt: signed.jwt })).valid).toBe(true);
    behaviour.fail = false;
    // The probe signs after the cooldown, though no call asks: readiness comes back by itself.
    await sleep(KEY_BACKEND_BREAKER_COOLDOWN_MS + 500);
    expect(await healthCheck(port, 'jwt.services.JwtService')).toBe('SERVING');
    expect(await probe('/readyz')).toBe(200);
    expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('hsm-down');
  }, 20_000);
});

describe.each(TRANSPORTS)('a backend whose signature does not verify with the published key (%s)', (transport) => {
  it('is never handed out: UNAVAILABLE, counted, NOT_SERVING; an in-memory caller beside it is served; back when it signs right', async () => {
    const [memory] = exportKeys(await generateKeys({ algorithms: ['HS256'] }), { includePrivate: true }).keys;
    const keys = importKeys({ keys: [handleEntry(`hsm-bad-${transport}`), { ...memory, kid: 'mac' }] });
    const registry = new Registry();
    const logger = recordingLogger();
    const { port } = await startServer({ transport, keys, health: true, metricsRegistry: registry, logger });
    const client = clients.jwt(port);
    const good = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    behaviour.otherKey = true;
    const refused = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(refused).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect(warnings(logger).at(-1)).toMatch(/signature does not verify with the key file's public key; not returned/);
    const counted = (await registry.metrics())
      .split('\n')
      .find((line) => line.startsWith(`jwt_grpc_key_backend_bad_signatures_total{kid="hsm-bad-${transport}"`));
    expect(counted).toBe(`jwt_grpc_key_backend_bad_signatures_total{kid="hsm-bad-${transport}",backend="test-hsm"} 1`);
    // One bad signature is enough: readiness goes at once, and the breaker refuses without asking the backend.
    expect(await healthCheck(port, 'jwt.services.JwtService')).toBe('NOT_SERVING');
    const calls = behaviour.calls;
    expect((await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }))).code).toBe(status.UNAVAILABLE);
    expect(behaviour.calls).toBe(calls);
    // The legitimate caller of an in-memory key, and verification, are unharmed.
    expect((await client.generateJwt({ subject: 'ada', algorithm: 'HS256' })).kid).toBe('mac');
    expect((await client.verifyJwt({ jwt: good.jwt })).valid).toBe(true);
    behaviour.otherKey = false;
    await sleep(KEY_BACKEND_BREAKER_COOLDOWN_MS + 500);
    expect(await healthCheck(port, 'jwt.services.JwtService')).toBe('SERVING');
    const back = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    expect((await client.verifyJwt({ jwt: back.jwt })).valid).toBe(true);
  }, 20_000);
});

describe('a backend that takes 5 ms a signature', () => {
  it('gets at most KEY_BACKEND_CONCURRENCY at once and does not stall VerifyJwt', async () => {
    const [memory] = exportKeys(await generateKeys({ algorithms: ['HS256'] }), { includePrivate: true }).keys;
    const keys = importKeys({ keys: [handleEntry('hsm-5ms'), { ...memory, kid: 'mac' }] });
    const { port } = await startServer({ transport: 'http2', keys });
    const client = clients.jwt(port);
    const token = (await client.generateJwt({ subject: 'ada', algorithm: 'HS256' })).jwt;
    behaviour.delayMs = 5;
    const issuing = Promise.all(Array.from({ length: 200 }, () => client.generateJwt({ subject: 'ada', algorithm: 'ES256' })));
    // 200 signatures, 16 at a time, 5 ms each: at least 60 ms of backend work queued.
    const started = performance.now();
    const verified = await client.verifyJwt({ jwt: token });
    const verifyMs = performance.now() - started;
    const issued = await issuing;
    const issuingMs = performance.now() - started;
    expect(verified.valid).toBe(true);
    expect(issued.every((answer) => answer.kid === 'hsm-5ms')).toBe(true);
    expect(behaviour.maxInFlight).toBeLessThanOrEqual(KEY_BACKEND_CONCURRENCY);
    expect(behaviour.maxInFlight).toBeGreaterThan(1);
    expect(verifyMs).toBeLessThan(issuingMs);
  });
});
