/**
 * Every algorithm signs and verifies its own tokens, with the header naming the active key;
 * test/tokens/sign.test.ts holds what the signer refuses.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, ALGORITHMS, type KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib/index.js';
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
