/**
 * JwtService over a real loopback connection: GenerateJwt, VerifyJwt and GetJwks as a
 * client sees them, on each transport.
 */
import { status } from '@grpc/grpc-js';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALGORITHMS, type KeySet, createSigner, generateKeys } from '../../src/lib/index.js';
import { ClientPool, type JwtClient, callError, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, nowSeconds, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';

const SUBJECTS = ['ada@example.com', 'grace@example.com', 'edsger@example.com'];
const ISSUER = 'https://auth.example.test';
const ASYMMETRIC = ['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'] as const;

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  const clients = new ClientPool();
  let keys: KeySet;
  /** Server with a subject pool. */
  let pooled: JwtClient;
  /** Server without a pool, with an issuer. */
  let plain: JwtClient;

  beforeAll(async () => {
    keys = await sharedKeys();
    pooled = clients.jwt((await startServer({ transport, keys, subjects: SUBJECTS })).port);
    plain = clients.jwt((await startServer({ transport, keys, issuer: ISSUER })).port);
  });

  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  describe('GenerateJwt', () => {
    it('hands out pool subjects round robin when the request names none', async () => {
      const { port } = await startServer({ transport, keys, subjects: SUBJECTS });
      const client = clients.jwt(port);
      const subs: string[] = [];
      for (let i = 0; i < SUBJECTS.length + 2; i++) subs.push((await client.generateJwt({ algorithm: 'HS256' })).sub);
      expect(subs).toEqual([...SUBJECTS, SUBJECTS[0], SUBJECTS[1]]);
      // A request that names its subject gets it, and does not advance the pool.
      expect((await client.generateJwt({ algorithm: 'HS256', subject: 'named@example.com' })).sub).toBe('named@example.com');
      expect((await client.generateJwt({ algorithm: 'HS256' })).sub).toBe(SUBJECTS[2]);
    });

    it('refuses a request without subject when the server has no pool, naming subject', async () => {
      const err = await callError(plain.generateJwt({ algorithm: 'HS256' }));
      expect(err.code).toBe(status.INVALID_ARGUMENT);
      expect(err.details).toMatch(/\bsubject\b/);
    });

    describe.each(ALGORITHMS)('%s', (alg) => {
      it('signs a token with the pool subject: jwt, sub, kid and expires_at agree with the token', async () => {
        const before = nowSeconds();
        const res = await pooled.generateJwt({ algorithm: alg });
        const after = nowSeconds();
        expect(SUBJECTS).toContain(res.sub);
        const { header, payload } = decodeJwt(res.jwt);
        expect(header).toMatchObject({ alg, typ: 'JWT', kid: res.kid });
        expect(keys.keys.find((key) => key.alg === alg)?.kid).toBe(res.kid);
        expect(payload['sub']).toBe(res.sub);
        expect(payload['exp']).toBe(res.expires_at);
        expect(typeof payload['iat']).toBe('number');
        const iat = payload['iat'] as number;
        expect(iat).toBeGreaterThanOrEqual(before);
        expect(iat).toBeLessThanOrEqual(after);
        expect(res.expires_at).toBe(iat + 7200);
        // No issuer configured, no audience asked: neither claim.
        expect(payload).not.toHaveProperty('iss');
        expect(payload).not.toHaveProperty('aud');

        const check = await pooled.verifyJwt({ jwt: res.jwt });
        expect(check).toMatchObject({ valid: true, sub: res.sub, reason: 'REASON_UNSPECIFIED' });
        expect(JSON.parse(check.claims_json)).toEqual(payload);
      });

      it('signs a token with the requested subject, ttl, audience, extra claims and the issuer', async () => {
        const res = await plain.generateJwt({
          algorithm: alg,
          subject: `user-${alg}@example.com`,
          audience: 'api://orders',
          ttl_seconds: 60,
          claims_json: JSON.stringify({ role: 'admin', scopes: ['read', 'write'], n: 1 }),
        });
        expect(res.sub).toBe(`user-${alg}@example.com`);
        const { header, payload } = decodeJwt(res.jwt);
        expect(header['kid']).toBe(res.kid);
        expect(payload).toMatchObject({
          sub: `user-${alg}@example.com`,
          iss: ISSUER,
          aud: 'api://orders',
          role: 'admin',
          scopes: ['read', 'write'],
          n: 1,
          exp: res.expires_at,
        });
        expect(res.expires_at - (payload['iat'] as number)).toBe(60);

        const check = await plain.verifyJwt({ jwt: res.jwt, audience: 'api://orders', issuer: ISSUER });
        expect(check.valid).toBe(true);
        expect(check.sub).toBe(res.sub);
        expect(JSON.parse(check.claims_json)).toEqual(payload);
      });
    });

    it('answers INVALID_ARGUMENT for an unknown algorithm, listing the configured ones', async () => {
      const err = await callError(pooled.generateJwt({ algorithm: 'XS999', subject: 'a' }));
      expect(err.code).toBe(status.INVALID_ARGUMENT);
      expect(err.details).toMatch(/algorithm/);
      const configured = /configured: (.*)$/.exec(err.details)?.[1]?.split(', ');
      expect(configured?.slice().sort()).toEqual([...ALGORITHMS].sort());
    });
  });

  describe('VerifyJwt', () => {
    it('accepts a valid token and answers its claims', async () => {
      const made = await pooled.generateJwt({ algorithm: 'ES256', claims_json: '{"tenant":"t-1"}' });
      const res = await pooled.verifyJwt({ jwt: made.jwt });
      expect(res).toMatchObject({ valid: true, sub: made.sub, reason: 'REASON_UNSPECIFIED' });
      expect(JSON.parse(res.claims_json)).toEqual(decodeJwt(made.jwt).payload);
      // Asked again: the same answer (the second may come from the cache).
      expect(await pooled.verifyJwt({ jwt: made.jwt })).toEqual(res);
    });

    it('answers EXPIRED for a token past its exp (beyond the clock tolerance)', async () => {
      const now = nowSeconds();
      const { token } = createSigner(keys).sign('ES256', { sub: 'old@example.com', iat: now - 3600, exp: now - 60 });
      expect(await pooled.verifyJwt({ jwt: token })).toEqual({ valid: false, sub: '', claims_json: '', reason: 'EXPIRED' });
    });

    it('answers NOT_YET_VALID for a token whose nbf is in the future', async () => {
      const now = nowSeconds();
      const { token } = createSigner(keys).sign('HS256', { sub: 'x', iat: now, nbf: now + 600, exp: now + 1200 });
      expect(await pooled.verifyJwt({ jwt: token })).toMatchObject({ valid: false, reason: 'NOT_YET_VALID' });
    });

    it.each(['HS256', 'ES256', 'RS256', 'EdDSA'])('answers BAD_SIGNATURE for a tampered %s token', async (alg) => {
      const a = (await pooled.generateJwt({ algorithm: alg, subject: 'a@example.com' })).jwt.split('.');
      const b = (await pooled.generateJwt({ algorithm: alg, subject: 'b@example.com' })).jwt.split('.');
      // a's header and signature around b's payload: well-formed, signed by a known key, not over this payload.
      const tampered = [a[0], b[1], a[2]].join('.');
      expect(await pooled.verifyJwt({ jwt: tampered })).toMatchObject({ valid: false, reason: 'BAD_SIGNATURE', sub: '' });
    });

    it('answers UNKNOWN_KEY for a token signed by a key the server does not have', async () => {
      const other = await generateKeys({ algorithms: ['ES256'] });
      const now = nowSeconds();
      const { token } = createSigner(other).sign('ES256', { sub: 'x', iat: now, exp: now + 60 });
      expect(await pooled.verifyJwt({ jwt: token })).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
    });

    it('answers AUDIENCE_MISMATCH and ISSUER_MISMATCH when the request asks for others', async () => {
      const made = await plain.generateJwt({ algorithm: 'ES256', subject: 's', audience: 'api://a' });
      expect(await plain.verifyJwt({ jwt: made.jwt, audience: 'api://b' })).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
      expect(await plain.verifyJwt({ jwt: made.jwt, issuer: 'https://evil.test' })).toMatchObject({
        valid: false,
        reason: 'ISSUER_MISMATCH',
      });
      // A token without aud does not satisfy an audience requirement.
      const noAud = await plain.generateJwt({ algorithm: 'ES256', subject: 's' });
      expect(await plain.verifyJwt({ jwt: noAud.jwt, audience: 'api://a' })).toMatchObject({ reason: 'AUDIENCE_MISMATCH' });
      // And the matching ones pass.
      expect((await plain.verifyJwt({ jwt: made.jwt, audience: 'api://a', issuer: ISSUER })).valid).toBe(true);
    });

    it('answers MALFORMED for something that is not a JWS', async () => {
      expect(await pooled.verifyJwt({ jwt: 'not-a-token' })).toMatchObject({ valid: false, reason: 'MALFORMED' });
    });

    it('answers INVALID_ARGUMENT for an empty jwt and for one longer than 8192 characters', async () => {
      const empty = await callError(pooled.verifyJwt({ jwt: '' }));
      expect(empty.code).toBe(status.INVALID_ARGUMENT);
      expect(empty.details).toMatch(/\bjwt\b/);
      const long = await callError(pooled.verifyJwt({ jwt: 'a'.repeat(8193) }));
      expect(long.code).toBe(status.INVALID_ARGUMENT);
      expect(long.details).toMatch(/\bjwt\b/);
      // 8192 exactly is still a (malformed) token, not a bad request.
      expect(await pooled.verifyJwt({ jwt: 'a'.repeat(8192) })).toMatchObject({ valid: false, reason: 'MALFORMED' });
    });
  });

  describe('GetJwks', () => {
    it('serves the public keys only: no HMAC keys, no private members', async () => {
      const { jwks_json } = await pooled.getJwks();
      const jwks = JSON.parse(jwks_json) as { keys: Record<string, unknown>[] };
      const expected = keys.keys.filter((key) => !key.alg.startsWith('HS'));
      expect(jwks.keys.map((jwk) => jwk['kid']).sort()).toEqual(expected.map((key) => key.kid).sort());
      for (const jwk of jwks.keys) {
        expect(['EC', 'RSA', 'OKP']).toContain(jwk['kty']);
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(jwk).not.toHaveProperty(secret);
        expect(jwk['use']).toBe('sig');
      }
      expect(jwks.keys.some((jwk) => String(jwk['alg']).startsWith('HS'))).toBe(false);
    });

    it('verifies every asymmetric token with jose and the served JWK Set', async () => {
      const jwks = jose.createLocalJWKSet(JSON.parse((await pooled.getJwks()).jwks_json) as jose.JSONWebKeySet);
      for (const alg of ASYMMETRIC) {
        const made = await plain.generateJwt({ algorithm: alg, subject: `jose-${alg}`, audience: 'api://jose' });
        const { payload, protectedHeader } = await jose.jwtVerify(made.jwt, jwks, { issuer: ISSUER, audience: 'api://jose' });
        expect(protectedHeader).toMatchObject({ alg, kid: made.kid });
        expect(payload.sub).toBe(`jose-${alg}`);
        expect(payload.exp).toBe(made.expires_at);
      }
    });
  });
});
