import { beforeAll, describe, expect, it } from 'vitest';
import { ALGORITHMS, JwtGrpcError, type KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib.js';
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

    const result = expectValid(createVerifier(keys).verify(signed.token));
    expect(result.alg).toBe(alg);
    expect(result.kid).toBe(kid);
    expect(result.payload).toEqual(claims);
    expect(JSON.parse(result.payloadJson)).toEqual(claims);
    expect(Object.isFrozen(result.payload)).toBe(true);

    // The uncached path agrees.
    expect(expectValid(createVerifier(keys, { cache: false }).verifyUncached(signed.token)).payload).toEqual(claims);
  });

  // No second RSA generation here (slow); attacks.test.ts covers a foreign RSA key.
  const cheap = ALGORITHMS.filter((alg) => alg !== 'RS256' && alg !== 'PS256');
  it.each(cheap)('%s: a token is not accepted by a verifier over another key set', async (alg) => {
    const other = await generateKeys({ algorithms: [alg] });
    const now = nowSeconds();
    const { token } = createSigner(keys).sign(alg, { sub: 'x', exp: now + 60 });
    const result = createVerifier(other).verify(token);
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

  it.each(['RS256', 'EdDSA', 'HS512'])('a known algorithm without a key (%s) is ERR_INVALID_REQUEST listing the configured ones', async (alg) => {
    const small = await generateKeys({ algorithms: ['HS256', 'ES256'] });
    const err = signError(small, alg);
    expect(err.code).toBe('ERR_INVALID_REQUEST');
    expect(err.message).toContain(alg);
    expect(err.message).toContain('HS256');
    expect(err.message).toContain('ES256');
  });

  it.each(['none', 'HS999', 'hs256', 'es256', '', 'RS512', '__proto__'])('an unknown algorithm %j is ERR_INVALID_REQUEST', (alg) => {
    const err = signError(keys, alg);
    expect(err.code).toBe('ERR_INVALID_REQUEST');
    for (const configured of keys.signingAlgorithms) expect(err.message).toContain(configured);
  });
});
