/**
 * One clock tolerance: every verifier (createVerifier, createRemoteVerifier, and so
 * jwtAuthInterceptor; the service's VerifyJwt; RevokeJwt's expiry arithmetic) takes
 * CLOCK_TOLERANCE_SECONDS by default. Each rejects a token whose exp plus the tolerance has
 * passed and accepts one just within it; a verifier with another default fails here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  CallMetadata,
  GrpcStatus,
  type JwtClient,
  type KeySet,
  createJwtClient,
  createRemoteVerifier,
  createSigner,
  createVerifier,
  exportKeys,
  generateKeys,
  jwtAuthInterceptor,
  silentLogger,
} from '../../src/lib/index.js';
import { CLOCK_TOLERANCE_SECONDS } from '../../src/options/table.js';
import { TRANSPORTS, closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';

const TOLERANCE = CLOCK_TOLERANCE_SECONDS;
const NOW = 1_800_000_000;
const SECRET = 'test-admin-secret-0123456789';

let keys: KeySet;
let dir: string;
let adminFile: string;
const clients: JwtClient[] = [];

beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256'] });
  dir = mkdtempSync(join(tmpdir(), 'clock-tolerance-'));
  adminFile = join(dir, 'admin-token');
  writeFileSync(adminFile, `${SECRET}\n`, { mode: 0o600 });
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await closeAllServers();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const wholeSeconds = (): number => Math.floor(Date.now() / 1000);
const tokenExpiring = (exp: number): string => createSigner(keys).sign('ES256', { sub: 'ada', iat: exp - 600, exp }).token;
/** A token whose exp + tolerance has just passed, and one whose exp + tolerance is 2 s away. */
const justPast = (now: number): string => tokenExpiring(now - TOLERANCE);
const justWithin = (now: number): string => tokenExpiring(now - TOLERANCE + 2);

function client(port: number): JwtClient {
  const made = createJwtClient(`127.0.0.1:${port}`);
  clients.push(made);
  return made;
}

/** A remote verifier reading the set from an issuer stand-in (the fetch is not what is tested here). */
const remoteVerifier = () =>
  createRemoteVerifier(
    { target: 'issuer.test:1', getJwks: async () => ({ jwks_json: JSON.stringify(exportKeys(keys)) }) },
    { audience: ANY_AUDIENCE, logger: silentLogger },
  );

it("is one small number, within every verifier's bounds", () => {
  expect(TOLERANCE).toBe(5);
});

describe('createVerifier, by default', () => {
  const verifier = (): ReturnType<typeof createVerifier> => createVerifier(keys, { audience: ANY_AUDIENCE, clock: () => NOW });

  it('rejects a token once exp + tolerance has passed, accepts one within it', () => {
    expect(verifier().verify(tokenExpiring(NOW - TOLERANCE))).toMatchObject({ valid: false, reason: 'EXPIRED' });
    expect(verifier().verify(tokenExpiring(NOW - TOLERANCE + 1))).toMatchObject({ valid: true });
  });

  it('accepts iat and nbf up to the tolerance ahead, not beyond', () => {
    const ahead = (seconds: number): string =>
      createSigner(keys).sign('ES256', { sub: 'a', iat: NOW + seconds, nbf: NOW + seconds, exp: NOW + 600 }).token;
    expect(verifier().verify(ahead(TOLERANCE))).toMatchObject({ valid: true });
    expect(verifier().verify(ahead(TOLERANCE + 1))).toMatchObject({ valid: false, reason: 'NOT_YET_VALID' });
  });
});

describe('createRemoteVerifier, by default (the same tolerance as the local verifier)', () => {
  it('rejects a token once exp + tolerance has passed, accepts one within it', async () => {
    const verifier = remoteVerifier();
    await verifier.refresh();
    const now = wholeSeconds();
    expect(await verifier.verify(justPast(now))).toMatchObject({ valid: false, reason: 'EXPIRED' });
    expect(await verifier.verify(justWithin(now))).toMatchObject({ valid: true });
  });
});

describe.each(TRANSPORTS)('over gRPC on %s', (transport) => {
  it('jwtAuthInterceptor with a remote verifier: a token past exp + tolerance is UNAUTHENTICATED EXPIRED, one within it passes', async () => {
    const verifier = remoteVerifier();
    await verifier.refresh();
    const { port } = await startServer({ keys, transport, interceptors: [jwtAuthInterceptor(verifier)] });
    const jwt = client(port);
    const bearer = (token: string) => ({ metadata: new CallMetadata().set('authorization', `Bearer ${token}`) });
    const now = wholeSeconds();
    await expect(jwt.getJwks({}, bearer(justPast(now)))).rejects.toMatchObject({
      status: GrpcStatus.UNAUTHENTICATED,
      details: expect.stringContaining('EXPIRED'),
    });
    await expect(jwt.getJwks({}, bearer(justWithin(now)))).resolves.toMatchObject({ jwks_json: expect.any(String) });
  });

  it('VerifyJwt: EXPIRED once exp + tolerance has passed, valid within it', async () => {
    const { port } = await startServer({ keys, transport });
    const jwt = client(port);
    const now = wholeSeconds();
    expect(await jwt.verifyJwt({ jwt: justPast(now) })).toMatchObject({ valid: false, reason: 'EXPIRED' });
    expect(await jwt.verifyJwt({ jwt: justWithin(now) })).toMatchObject({ valid: true, sub: 'ada' });
  });

  it('RevokeJwt: a revocation lasts until exp + tolerance; an expires_at whose tolerance has passed is refused', async () => {
    const { port } = await startServer({ keys, transport, adminTokenFile: adminFile });
    const jwt = client(port);
    const admin = { metadata: new CallMetadata().set('authorization', `Bearer ${SECRET}`) };
    const now = wholeSeconds();
    const within = now - TOLERANCE + 2;
    expect(await jwt.revokeJwt({ jti: 'within-tolerance', expires_at: within }, admin)).toEqual({
      revoked: true,
      expires_at: within + TOLERANCE,
    });
    await expect(jwt.revokeJwt({ jti: 'past-tolerance', expires_at: now - TOLERANCE }, admin)).rejects.toMatchObject({
      status: GrpcStatus.INVALID_ARGUMENT,
      details: expect.stringContaining('has passed'),
    });
  });
});
