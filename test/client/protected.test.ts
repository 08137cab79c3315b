/**
 * A protected service end to end, over TLS: an issuer (createJwtServer), a service behind
 * jwtAuthInterceptor with a remote verifier, and callers with jwtCallCredentials.
 */
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type KeySet,
  createRemoteVerifier,
  createSigner,
  exportKeys,
  generateKeys,
  importKeys,
  jwtAuthInterceptor,
  jwtCallCredentials,
  silentLogger,
} from '../../src/lib/index.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { PUBLIC, cleanup, clientTls, counted, failure, greeterClient, issuerClient, startGreeter, startIssuer } from './harness.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'greeter';

let certs: TestCerts;
let keys: KeySet;

beforeAll(async () => {
  if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
  certs = makeTestCerts();
  keys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
});
afterEach(cleanup);
afterAll(() => certs?.remove());

const now = (): number => Math.floor(Date.now() / 1000);
const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Issuer, protected service and a caller whose credentials ask for `audience`. */
async function scene(options: { audience?: string; cooldownMs?: number; maxAgeMs?: number } = {}) {
  const issuer = await startIssuer(certs, { keys, issuer: ISSUER });
  const jwks = counted(issuerClient(certs, issuer.target));
  const verifier = createRemoteVerifier(jwks.client, {
    audience: AUDIENCE,
    issuer: ISSUER,
    cooldownMs: options.cooldownMs ?? 0,
    ...(options.maxAgeMs !== undefined && { maxAgeMs: options.maxAgeMs }),
    logger: silentLogger,
  });
  const greeter = await startGreeter(certs, [jwtAuthInterceptor(verifier, { publicMethods: [PUBLIC] })]);
  const tokens = counted(issuerClient(certs, issuer.target));
  const callCredentials = jwtCallCredentials(tokens.client, {
    algorithm: 'ES256',
    subject: 'ada@example.com',
    audience: options.audience ?? AUDIENCE,
    logger: silentLogger,
  });
  const caller = greeterClient(greeter.target, credentials.combineChannelCredentials(clientTls(certs), callCredentials));
  const anonymous = greeterClient(greeter.target, clientTls(certs));
  return { issuer, jwks, verifier, greeter, tokens, caller, anonymous };
}

/** A call with exactly this authorization header, and its UNAUTHENTICATED details. */
async function refusedWith(s: Awaited<ReturnType<typeof scene>>, token: string): Promise<string> {
  const err = await failure(s.anonymous.hello({ metadata: { authorization: `Bearer ${token}` } }));
  expect(err.code).toBe(status.UNAUTHENTICATED);
  return err.details;
}

describe('a protected service', () => {
  it('lets a caller with a good token in, and its handler sees the verified claims', async () => {
    const s = await scene();
    const reply = await s.caller.hello();
    expect(reply.message).toBe('hello ada@example.com');
    const claims = JSON.parse(reply.claims_json) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'ada@example.com', aud: AUDIENCE, iss: ISSUER });
    expect(claims['exp']).toBeGreaterThan(now());
  });

  it('refuses a call without a token before the handler runs', async () => {
    const s = await scene();
    const err = await failure(s.anonymous.hello());
    expect(err.code).toBe(status.UNAUTHENTICATED);
    expect(err.details).toBe('missing token');
    expect(s.greeter.handled.count).toBe(0);
  });

  it('refuses malformed authorization headers', async () => {
    const s = await scene();
    const good = (await s.tokens.client.generateJwt({ algorithm: 'ES256', subject: 'a', audience: AUDIENCE })).jwt;
    for (const value of [good, `Basic ${good}`, 'Bearer', `Bearer ${good} extra`]) {
      const err = await failure(s.anonymous.hello({ metadata: { authorization: value } }));
      expect(err.code).toBe(status.UNAUTHENTICATED);
      expect(err.details).toBe('authorization is not "Bearer <token>"');
    }
  });

  it('refuses an expired token', async () => {
    const s = await scene();
    const past = now() - 3600;
    const { token } = createSigner(keys).sign('ES256', { sub: 'ada', aud: AUDIENCE, iss: ISSUER, iat: past - 60, exp: past });
    expect(await refusedWith(s, token)).toMatch(/^EXPIRED: /);
  });

  it('refuses a token for another audience', async () => {
    const s = await scene({ audience: 'billing' });
    const err = await failure(s.caller.hello());
    expect(err.code).toBe(status.UNAUTHENTICATED);
    expect(err.details).toMatch(/^AUDIENCE_MISMATCH: /);
  });

  it('refuses a token whose payload was changed after signing', async () => {
    const s = await scene();
    const good = (await s.tokens.client.generateJwt({ algorithm: 'ES256', subject: 'ada', audience: AUDIENCE })).jwt;
    const [header, , signature] = good.split('.');
    const forged = `${header}.${b64({ sub: 'admin', aud: AUDIENCE, iss: ISSUER, exp: now() + 3600 })}.${signature}`;
    expect(await refusedWith(s, forged)).toMatch(/^BAD_SIGNATURE: /);
  });

  it('refuses alg none', async () => {
    const s = await scene();
    const kid = keys.keys.find((key) => key.alg === 'ES256')?.kid;
    for (const alg of ['none', 'None', 'NONE']) {
      const token = `${b64({ alg, typ: 'JWT', kid })}.${b64({ sub: 'admin', aud: AUDIENCE, iss: ISSUER, exp: now() + 3600 })}.`;
      expect(await refusedWith(s, token)).toMatch(/^ALGORITHM_NOT_ALLOWED: /);
    }
  });

  it("refuses a token signed with another issuer's key, under its own kid or under ours", async () => {
    const s = await scene();
    const other = await generateKeys({ algorithms: ['ES256'] });
    const claims = { sub: 'admin', aud: AUDIENCE, iss: ISSUER, iat: now(), exp: now() + 3600 };
    const ownKid = createSigner(other).sign('ES256', claims).token;
    expect(await refusedWith(s, ownKid)).toMatch(/^UNKNOWN_KEY: /);
    // The same foreign private key, its header naming our kid.
    const ourKid = keys.keys.find((key) => key.alg === 'ES256')?.kid as string;
    const renamed = importKeys({ keys: exportKeys(other, { includePrivate: true }).keys.map((jwk) => ({ ...jwk, kid: ourKid })) });
    expect(await refusedWith(s, createSigner(renamed).sign('ES256', claims).token)).toMatch(/^BAD_SIGNATURE: /);
  });

  it('refuses an HS256 token from the issuer: the remote verifier has no HMAC keys', async () => {
    const s = await scene();
    const hs = (await s.tokens.client.generateJwt({ algorithm: 'HS256', subject: 'ada', audience: AUDIENCE })).jwt;
    expect(await refusedWith(s, hs)).toMatch(/^UNKNOWN_KEY: HS256 tokens cannot be verified/);
  });

  it('gives no claims to a public method, whatever headers the client sends', async () => {
    const s = await scene();
    const forgedClaims = JSON.stringify({ sub: 'admin', aud: AUDIENCE, iss: ISSUER, exp: now() + 3600 });
    const reply = await s.anonymous.public({
      metadata: { 'x-jwt-claims': forgedClaims, 'jwt-claims': forgedClaims, 'verified-claims': forgedClaims, claims: forgedClaims },
    });
    expect(reply.message).toBe('hello stranger');
    expect(reply.claims_json).toBe('null');
    // A caller with a good token and the same headers gets its own token's claims.
    const own = await s.caller.hello();
    expect(JSON.parse(own.claims_json)).toMatchObject({ sub: 'ada@example.com' });
  });

  it('1,000 concurrent calls with one credentials object fetch one token', async () => {
    const s = await scene();
    const replies = await Promise.all(Array.from({ length: 1000 }, () => s.caller.hello()));
    expect(replies.every((reply) => reply.message === 'hello ada@example.com')).toBe(true);
    expect(s.tokens.calls.generateJwt).toBe(1);
    expect(s.greeter.tokens.size).toBe(1);
    expect(s.jwks.calls.getJwks).toBe(1);
  });
});

describe('issuer key rotation', () => {
  it('accepts the new kid after one refetch, and still the old', async () => {
    const s = await scene();
    const oldToken = (await s.tokens.client.generateJwt({ algorithm: 'ES256', subject: 'old', audience: AUDIENCE })).jwt;
    await s.caller.hello();
    expect(s.jwks.calls.getJwks).toBe(1);

    const fresh = await generateKeys({ algorithms: ['ES256'] });
    const rotated = importKeys({
      keys: [...exportKeys(fresh, { includePrivate: true }).keys, ...exportKeys(keys, { includePrivate: true }).keys],
    });
    s.issuer.server.service.setKeys(rotated);
    const newToken = (await s.tokens.client.generateJwt({ algorithm: 'ES256', subject: 'new', audience: AUDIENCE })).jwt;
    expect(newToken.split('.')[0]).not.toBe(oldToken.split('.')[0]);

    const viaNew = await s.anonymous.hello({ metadata: { authorization: `Bearer ${newToken}` } });
    expect(viaNew.message).toBe('hello new');
    expect(s.jwks.calls.getJwks).toBe(2);
    const viaOld = await s.anonymous.hello({ metadata: { authorization: `Bearer ${oldToken}` } });
    expect(viaOld.message).toBe('hello old');
    expect(s.jwks.calls.getJwks).toBe(2);
    expect(s.verifier.keys.map((key) => key.kid)).toEqual(rotated.keys.filter((key) => key.alg === 'ES256').map((key) => key.kid));
  });
});

describe('issuer key rotation, publish first and sign later', () => {
  it('switches to the new key with no refetch and no refused call', async () => {
    const s = await scene({ cooldownMs: 300, maxAgeMs: 300 });
    await s.caller.hello();
    const fresh = await generateKeys({ algorithms: ['ES256'] });
    const current = exportKeys(keys, { includePrivate: true }).keys;
    // Step 1: the new key published (public only: nothing is signed with it yet).
    s.issuer.server.service.setKeys(importKeys({ keys: [...current, ...exportKeys(fresh).keys] }));
    await new Promise((resolve) => setTimeout(resolve, 350));
    await s.caller.hello(); // the set is older than maxAgeMs: refetched in the background
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.jwks.calls.getJwks).toBe(2);
    // Step 2: the new key signs; well within the cooldown, so a kid miss could not refetch.
    s.issuer.server.service.setKeys(importKeys({ keys: [...exportKeys(fresh, { includePrivate: true }).keys, ...current] }));
    const newToken = (await s.tokens.client.generateJwt({ algorithm: 'ES256', subject: 'new', audience: AUDIENCE })).jwt;
    expect((await s.anonymous.hello({ metadata: { authorization: `Bearer ${newToken}` } })).message).toBe('hello new');
    expect(s.jwks.calls.getJwks).toBe(2);
  });
});

describe('issuer down', () => {
  it('keeps verifying with the cached keys, refuses unknown kids, and fails new callers with UNAVAILABLE', async () => {
    const s = await scene();
    const cachedToken = (await s.tokens.client.generateJwt({ algorithm: 'ES256', subject: 'cached', audience: AUDIENCE })).jwt;
    expect((await s.caller.hello()).message).toBe('hello ada@example.com');
    await s.issuer.server.close({ graceMs: 0 });

    expect((await s.caller.hello()).message).toBe('hello ada@example.com');
    expect((await s.anonymous.hello({ metadata: { authorization: `Bearer ${cachedToken}` } })).message).toBe('hello cached');

    const stranger = await generateKeys({ algorithms: ['ES256'] });
    const unknown = createSigner(stranger).sign('ES256', { sub: 'x', aud: AUDIENCE, iss: ISSUER, iat: now(), exp: now() + 60 }).token;
    expect(await refusedWith(s, unknown)).toMatch(/^UNKNOWN_KEY: /);
    expect(s.jwks.calls.getJwks).toBe(2);

    const newCaller = greeterClient(
      s.greeter.target,
      credentials.combineChannelCredentials(
        clientTls(certs),
        jwtCallCredentials(s.tokens.client, { algorithm: 'ES256', subject: 'late', audience: AUDIENCE, logger: silentLogger }),
      ),
    );
    const err = await failure(newCaller.hello());
    expect(err.code).toBe(status.UNAVAILABLE);
    expect(err.details).toContain(`cannot get a token from issuer ${s.issuer.target}`);
  });
});
