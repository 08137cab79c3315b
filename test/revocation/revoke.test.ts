/**
 * Revocation on a real server over loopback, on both transports: tokens carry a jti
 * (or not, with jti off); RevokeJwt by token and by jti, twice; what it refuses (a token
 * that does not verify, one without a jti, a missing or wrong admin secret, a server
 * without a credential, a certificate that is not a revoker); VerifyJwt's REVOKED;
 * the file store across a restart; the metrics.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, status } from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallMetadata, JwtGrpcError, type JwtPolicy, type KeySet } from '../../src/lib/index.js';
import type { RevocationStore } from '../../src/contracts/revocation-store.js';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts, mutualTlsListen } from '../../bench/kit/certs.js';
import { ClientPool, callError, decodeJwt } from '../../bench/kit/grpc-clients.js';
import {
  TRANSPORTS,
  closeAllServers,
  nowSeconds,
  recordingLogger,
  sharedKeys,
  signHs256,
  startServer,
} from '../../bench/kit/jwt-servers.js';

const SECRET = 'test-admin-secret-0123456789';
const clients = new ClientPool();
let dir: string;
let adminFile: string;
let keys: KeySet;

const admin = (secret = SECRET): { metadata: CallMetadata } => ({ metadata: new CallMetadata().set('authorization', `Bearer ${secret}`) });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-revoke-'));
  adminFile = join(dir, 'admin-token');
  writeFileSync(adminFile, `${SECRET}\n`, { mode: 0o600 });
  keys = await sharedKeys();
});

afterEach(async () => {
  clients.closeAll();
  await closeAllServers();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The value of one sample of `name` in the registry's text, or undefined. */
async function sample(registry: Registry, name: string, labels: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe.each(TRANSPORTS)('on %s', (transport) => {
  it('puts a fresh 128-bit base64url jti in every token by default, and none with jti off', async () => {
    const { port } = await startServer({ keys, transport, subjects: ['ada'] });
    const client = clients.jwt(port);
    const jtis = await Promise.all(
      [1, 2, 3].map(async () => decodeJwt((await client.generateJwt({ algorithm: 'ES256' })).jwt).payload['jti']),
    );
    for (const jti of jtis) expect(jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Set(jtis).size).toBe(3);
    expect(Buffer.from(jtis[0] as string, 'base64url')).toHaveLength(16);

    const { port: plainPort } = await startServer({ keys, transport, subjects: ['ada'], jti: false });
    const plain = decodeJwt((await clients.jwt(plainPort).generateJwt({ algorithm: 'ES256' })).jwt).payload;
    expect(Object.keys(plain)).toEqual(['sub', 'iat', 'exp']);
  });

  it('revokes by token: VerifyJwt then answers REVOKED, until exp plus the clock tolerance; twice is fine', async () => {
    const registry = new Registry();
    const logger = recordingLogger();
    const { port } = await startServer({
      keys,
      transport,
      subjects: ['ada'],
      adminTokenFile: adminFile,
      clockToleranceSeconds: 7,
      metricsRegistry: registry,
      logger,
    });
    const client = clients.jwt(port);
    const made = await client.generateJwt({ algorithm: 'HS256', ttl_seconds: 600 });
    expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);

    const answer = await client.revokeJwt({ jwt: made.jwt, reason: 'laptop stolen' }, admin());
    expect(answer).toEqual({ revoked: true, expires_at: made.expires_at + 7 });
    expect(await client.verifyJwt({ jwt: made.jwt })).toEqual({ valid: false, sub: '', claims_json: '', reason: 'REVOKED' });
    // Another token stays valid.
    const other = await client.generateJwt({ algorithm: 'HS256' });
    expect((await client.verifyJwt({ jwt: other.jwt })).valid).toBe(true);

    expect(await client.revokeJwt({ jwt: made.jwt }, admin())).toEqual(answer);
    expect(await sample(registry, 'jwt_grpc_revocations_total', 'outcome="revoked"')).toBe(1);
    expect(await sample(registry, 'jwt_grpc_revocations_total', 'outcome="already"')).toBe(1);
    expect(await sample(registry, 'jwt_grpc_verifications_total', 'result="invalid",reason="REVOKED"')).toBe(1);
    // In memory only: no store, so no store gauge.
    expect(await registry.metrics()).not.toMatch(/^jwt_grpc_revocation_store_up\{/m);
    const audit = logger.lines.find((line) => line.message === 'revocation: token revoked');
    expect(audit?.fields).toMatchObject({
      audit: 'revoke',
      by: 'admin-token',
      jti: decodeJwt(made.jwt).payload['jti'],
      reason: 'laptop stolen',
    });
    expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
    expect(JSON.stringify(logger.lines)).not.toContain(made.jwt);
  });

  it('revokes by jti and exp, for a token the caller no longer has', async () => {
    const { port } = await startServer({ keys, transport, subjects: ['ada'], adminTokenFile: adminFile });
    const client = clients.jwt(port);
    const made = await client.generateJwt({ algorithm: 'ES256' });
    const jti = decodeJwt(made.jwt).payload['jti'] as string;
    const answer = await client.revokeJwt({ jti, expires_at: made.expires_at }, admin());
    expect(answer).toEqual({ revoked: true, expires_at: made.expires_at + 5 });
    expect((await client.verifyJwt({ jwt: made.jwt })).reason).toBe('REVOKED');
  });

  it('refuses what it cannot revoke with INVALID_ARGUMENT naming the problem', async () => {
    const { port } = await startServer({ keys, transport, subjects: ['ada'], adminTokenFile: adminFile, jti: false });
    const client = clients.jwt(port);
    const made = await client.generateJwt({ algorithm: 'HS256' });
    const tampered = `${made.jwt.slice(0, -4)}AAAA`;
    const forged = signHs256(keys, {}, JSON.stringify({ sub: 'x', exp: nowSeconds() - 3600, jti: 'abc' }));
    const cases: [Parameters<typeof client.revokeJwt>[0], RegExp][] = [
      [{ jwt: tampered }, /does not verify \(BAD_SIGNATURE/],
      [{ jwt: forged }, /does not verify \(EXPIRED/],
      [{ jwt: made.jwt }, /has no jti claim/],
      [{}, /give jwt, or jti and expires_at/],
      [{ jti: 'abc' }, /expires_at: is required/],
      [{ jti: 'abc', expires_at: nowSeconds() - 3600 }, /expires_at: has passed/],
      [{ jti: 'abc', expires_at: nowSeconds() + 10 * 86_400 }, /more than maxTtlSeconds/],
      [{ jwt: made.jwt, jti: 'abc' }, /not both/],
      [{ jti: 'abc', expires_at: nowSeconds() + 60, reason: 'x'.repeat(257) }, /reason: is longer than 256/],
    ];
    for (const [request, message] of cases) {
      const failure = await callError(client.revokeJwt(request, admin()));
      expect(failure.code, JSON.stringify(request).slice(0, 80)).toBe(status.INVALID_ARGUMENT);
      expect(failure.details).toMatch(message);
    }
  });

  it('answers PERMISSION_DENIED without an admin credential, UNAUTHENTICATED for a missing or wrong secret', async () => {
    const registry = new Registry();
    const { port: closed } = await startServer({ keys, transport, subjects: ['ada'] });
    const made = await clients.jwt(closed).generateJwt({ algorithm: 'HS256' });
    const off = await callError(clients.jwt(closed).revokeJwt({ jwt: made.jwt }, admin()));
    expect(off.code).toBe(status.PERMISSION_DENIED);
    expect(off.details).toMatch(/no admin credential/);

    const { port } = await startServer({ keys, transport, subjects: ['ada'], adminTokenFile: adminFile, metricsRegistry: registry });
    const client = clients.jwt(port);
    const missing = await callError(client.revokeJwt({ jwt: made.jwt }));
    expect(missing.code).toBe(status.UNAUTHENTICATED);
    const wrongSecret = `${SECRET.slice(0, -1)}X`;
    const wrong = await callError(client.revokeJwt({ jwt: made.jwt }, admin(wrongSecret)));
    expect(wrong).toEqual({ code: status.UNAUTHENTICATED, details: 'the admin secret does not match' });
    const notBearer = await callError(client.revokeJwt({ jwt: made.jwt }, { metadata: new CallMetadata().set('authorization', SECRET) }));
    expect(notBearer.code).toBe(status.UNAUTHENTICATED);
    expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
    expect(await sample(registry, 'jwt_grpc_revocations_total', 'outcome="unauthenticated"')).toBe(3);
  });

  it('takes a store of its own: loads what it holds at listen, and answers UNAVAILABLE, revoking nothing, when its add fails', async () => {
    const registry = new Registry();
    const first = await clients.jwt((await startServer({ keys, transport, subjects: ['ada'] })).port).generateJwt({ algorithm: 'HS256' });
    const jti = decodeJwt(first.jwt).payload['jti'] as string;
    let up = true;
    const store: RevocationStore = {
      kind: 'test',
      get up() {
        return up;
      },
      async start(onRevoked) {
        onRevoked([{ jti, expiresAt: first.expires_at + 5 }]);
      },
      async add() {
        up = false;
        throw new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', 'test store is down');
      },
      async close() {},
    };
    const { port } = await startServer({
      keys,
      transport,
      subjects: ['ada'],
      adminTokenFile: adminFile,
      revocationStore: store,
      metricsRegistry: registry,
    });
    const client = clients.jwt(port);
    expect((await client.verifyJwt({ jwt: first.jwt })).reason).toBe('REVOKED');
    expect(await sample(registry, 'jwt_grpc_revocation_store_up', 'store="test"')).toBe(1);
    const made = await client.generateJwt({ algorithm: 'HS256' });
    const failure = await callError(client.revokeJwt({ jwt: made.jwt }, admin()));
    expect(failure.code).toBe(status.UNAVAILABLE);
    expect(failure.details).toContain('test store is down');
    expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
    expect(await sample(registry, 'jwt_grpc_revocations_total', 'outcome="unavailable"')).toBe(1);
    expect(await sample(registry, 'jwt_grpc_revocation_store_up', 'store="test"')).toBe(0);
  });

  it('keeps revocations in the file across a restart', async () => {
    const file = join(dir, `restart-${transport}.jsonl`);
    const registry = new Registry();
    const first = await startServer({
      keys,
      transport,
      subjects: ['ada'],
      adminTokenFile: adminFile,
      revocations: file,
      metricsRegistry: registry,
    });
    const made = await clients.jwt(first.port).generateJwt({ algorithm: 'HS256' });
    await clients.jwt(first.port).revokeJwt({ jwt: made.jwt, reason: 'restart' }, admin());
    expect(await sample(registry, 'jwt_grpc_revocation_store_up', 'store="file"')).toBe(1);
    await first.server.close();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { jti: decodeJwt(made.jwt).payload['jti'], expiresAt: made.expires_at + 5, reason: 'restart' },
    ]);

    const second = await startServer({ keys, transport, subjects: ['ada'], revocations: file, adminTokenFile: adminFile });
    expect((await clients.jwt(second.port).verifyJwt({ jwt: made.jwt })).reason).toBe('REVOKED');
  });

  it('keeps a revocation whose line lost its newline in a crash: still REVOKED after two restarts, and the next one on its own line', async () => {
    const file = join(dir, `no-newline-${transport}.jsonl`);
    const first = await startServer({ keys, transport, subjects: ['ada'], adminTokenFile: adminFile, revocations: file });
    const made = await clients.jwt(first.port).generateJwt({ algorithm: 'HS256' });
    await clients.jwt(first.port).revokeJwt({ jwt: made.jwt }, admin());
    await first.server.close();
    // As a crash between the write of the entry and that of its newline leaves it.
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n$/, ''));

    const second = await startServer({ keys, transport, subjects: ['ada'], revocations: file, adminTokenFile: adminFile });
    expect((await clients.jwt(second.port).verifyJwt({ jwt: made.jwt })).reason).toBe('REVOKED');
    const other = await clients.jwt(second.port).generateJwt({ algorithm: 'HS256' });
    await clients.jwt(second.port).revokeJwt({ jwt: other.jwt }, admin());
    await second.server.close();
    expect(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => (line === '' ? '' : (JSON.parse(line) as { jti: string }).jti)),
    ).toEqual([decodeJwt(made.jwt).payload['jti'], decodeJwt(other.jwt).payload['jti'], '']);

    const third = await startServer({ keys, transport, subjects: ['ada'], revocations: file, adminTokenFile: adminFile });
    for (const token of [made, other]) expect((await clients.jwt(third.port).verifyJwt({ jwt: token.jwt })).reason).toBe('REVOKED');
  });
});

describe('the options', () => {
  it('refuses two stores, a store URL that is not Redis, and a short admin secret', async () => {
    const { createJwtServer } = await import('../../src/lib/index.js');
    expect(() => createJwtServer({ revocations: join(dir, 'a'), revocationStore: 'redis://localhost:6379' })).toThrow(
      /give one store, not both/,
    );
    expect(() => createJwtServer({ revocationStore: 'http://user:pw@example.org' })).toThrow(
      /must be a redis:\/\/ or rediss:\/\/ URL, got "http:\/\/\*\*\*@example.org"/,
    );
    const short = join(dir, 'short');
    writeFileSync(short, 'tooshort\n');
    await expect(startServer({ keys, transport: 'http2', adminTokenFile: short })).rejects.toThrow(/at least 16 characters/);
  });
});

describe.skipIf(!hasOpenssl())('revokers of the policy, over mutual TLS', () => {
  const REVOKER = 'spiffe://example.org/ns/ops/sa/revoker';
  const OTHER = 'spiffe://example.org/ns/shop/sa/orders';
  const POLICY: JwtPolicy = { callers: { [OTHER]: { subjects: ['svc-orders'] } }, revokers: [REVOKER] };
  let certs: TestCerts;
  let revoker: ClientCert;
  let other: ClientCert;

  beforeAll(() => {
    certs = makeTestCerts();
    revoker = makeClientCert(certs, 'revoker', `URI:${REVOKER}`);
    other = makeClientCert(certs, 'other', `URI:${OTHER}`);
  });

  afterAll(() => certs?.remove());

  it.each(TRANSPORTS)('on %s: a listed revoker may revoke without a secret; another caller is denied', async (transport) => {
    const { createJwtServer } = await import('../../src/lib/index.js');
    const { trackServer } = await import('../../bench/kit/jwt-servers.js');
    const server = trackServer(createJwtServer({ keys, transport, policy: POLICY, logger: recordingLogger() }));
    const port = await server.listen('127.0.0.1:0', mutualTlsListen(certs));
    const as = (cert: ClientCert) =>
      clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, cert.key, cert.cert) });
    const made = await as(other).generateJwt({ algorithm: 'ES256', subject: 'svc-orders' });

    const denied = await callError(as(other).revokeJwt({ jwt: made.jwt }, admin()));
    expect(denied.code).toBe(status.PERMISSION_DENIED);
    expect(denied.details).toContain(`caller "${OTHER}" is not among the policy's revokers`);
    expect((await as(other).verifyJwt({ jwt: made.jwt })).valid).toBe(true);

    expect((await as(revoker).revokeJwt({ jwt: made.jwt })).revoked).toBe(true);
    expect((await as(other).verifyJwt({ jwt: made.jwt })).reason).toBe('REVOKED');
  });
});
