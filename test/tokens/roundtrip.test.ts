import { beforeAll, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, ALGORITHMS, JwtGrpcError, type KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib/index.js';
import { activeKid, expectValid, nowSeconds } from './helpers.js';

let keys: KeySet;

beforeAll(async () => {
  keys = await generateKeys();
});

function decodeSegment(segment: string | undefined): unknown {
  return JSON.parse(Buffer.from(segment ?? '', 'base64url').toString('utf8'));
}

describe('sign then verify', () => {
  it('the generated set signs with every algorithm', () => {
    expect([...keys.signingAlgorithms].sort()).toEqual([...ALGORITHMS].sort());
    expect([...createSigner(keys).algorithms].sort()).toEqual([...ALGORITHMS].sort());
  });

  it.each(ALGORITHMS)('%s: the token verifies with the same payload and a JWT header naming the active key', (alg) => {
    const now = nowSeconds();
    const claims = { sub: `user-${alg}@example.com`, iat: now, exp: now + 600, role: ['a', 'b'] };
    const signed = createSigner(keys).sign(alg, claims);

    const kid = activeKid(keys, alg);
    expect(signed.alg).toBe(alg);
    expect(signed.kid).toBe(kid);

    const parts = signed.token.split('.');
    expect(parts).toHaveLength(3);
    for (const part of parts) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeSegment(parts[0])).toEqual({ alg, typ: 'JWT', kid });
    expect(decodeSegment(parts[1])).toEqual(claims);

    const result = expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(signed.token));
    expect(result.alg).toBe(alg);
    expect(result.kid).toBe(kid);
    expect(result.payload).toEqual(claims);
    expect(JSON.parse(result.payloadJson)).toEqual(claims);
    expect(Object.isFrozen(result.payload)).toBe(true);

    // The uncached path agrees.
    expect(expectValid(createVerifier(keys, { audience: ANY_AUDIENCE, cache: false }).verifyUncached(signed.token)).payload).toEqual(
      claims,
    );
  });

  // No second RSA generation here (slow); attacks.test.ts covers a foreign RSA key.
  const cheap = ALGORITHMS.filter((alg) => alg !== 'RS256' && alg !== 'PS256');
  it.each(cheap)('%s: a token is not accepted by a verifier over another key set', async (alg) => {
    const other = await generateKeys({ algorithms: [alg] });
    const now = nowSeconds();
    const { token } = createSigner(keys).sign(alg, { sub: 'x', exp: now + 60 });
    const result = createVerifier(other, { audience: ANY_AUDIENCE }).verify(token);
    // The other set has its own random kid, so the key is unknown there.
    expect(result.valid ? 'valid' : result.reason).toBe('UNKNOWN_KEY');
  });
});

describe('signing with an algorithm that is not configured', () => {
  function signError(set: KeySet, alg: string): JwtGrpcError {
    try {
      createSigner(set).sign(alg, { sub: 'x', exp: nowSeconds() + 60 });
    } catch (err) {
      expect(err).toBeInstanceOf(JwtGrpcError);
      return err as JwtGrpcError;
    }
    throw new Error(`sign(${alg}) did not throw`);
  }

  it.each(['RS256', 'EdDSA', 'HS512'])(
    'a known algorithm without a key (%s) is ERR_INVALID_REQUEST listing the configured ones',
    async (alg) => {
      const small = await generateKeys({ algorithms: ['HS256', 'ES256'] });
      const err = signError(small, alg);
      expect(err.code).toBe('ERR_INVALID_REQUEST');
      expect(err.message).toContain(alg);
      expect(err.message).toContain('HS256');
      expect(err.message).toContain('ES256');
    },
  );

  it.each(['none', 'HS999', 'hs256', 'es256', '', 'RS512', '__proto__'])('an unknown algorithm %j is ERR_INVALID_REQUEST', (alg) => {
    const err = signError(keys, alg);
    expect(err.code).toBe('ERR_INVALID_REQUEST');
    for (const configured of keys.signingAlgorithms) expect(err.message).toContain(configured);
  });
});

describe('signing claims a verifier would refuse', () => {
  it.each([
    ['no exp', { sub: 'x' }, 'claim exp is missing'],
    ['exp as a string', { sub: 'x', exp: String(nowSeconds() + 60) }, 'claim exp must be a number of seconds'],
    ['exp not finite', { sub: 'x', exp: Number.NaN }, 'claim exp must be a number of seconds'],
    ['sub not a string', { sub: 42, exp: nowSeconds() + 60 }, 'claim sub must be a string'],
    ['aud a number', { aud: 1, exp: nowSeconds() + 60 }, 'claim aud must be a string or an array of strings'],
  ])('%s: ERR_INVALID_REQUEST naming the claim, and no token', (_what, claims, message) => {
    let caught: unknown;
    try {
      createSigner(keys).sign('HS256', claims);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(JwtGrpcError);
    expect((caught as JwtGrpcError).code).toBe('ERR_INVALID_REQUEST');
    expect((caught as JwtGrpcError).message).toContain(`cannot sign: ${message}`);
  });
});

describe('AUDIENCE_MISMATCH', () => {
  it('says when the token has no aud at all', () => {
    const { token } = createSigner(keys).sign('HS256', { sub: 'x', exp: nowSeconds() + 60 });
    expect(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token, { audience: 'api' })).toMatchObject({
      valid: false,
      reason: 'AUDIENCE_MISMATCH',
      message: 'token has no aud claim, and an audience is expected',
    });
    const other = createSigner(keys).sign('HS256', { aud: 'billing', exp: nowSeconds() + 60 }).token;
    expect(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(other, { audience: 'api' })).toMatchObject({
      message: 'token aud does not contain the expected audience',
    });
  });
});
