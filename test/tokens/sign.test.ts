import { beforeAll, describe, expect, it } from 'vitest';
import { ALGORITHMS, type KeySet, createSigner, generateKeys } from '../../src/lib.js';
import { activeKid, nowSeconds, tokenFor } from './helpers.js';

let keys: KeySet;
let otherKeys: KeySet;

beforeAll(async () => {
  [keys, otherKeys] = await Promise.all([generateKeys(), generateKeys()]);
});

function claims(sub: string): Record<string, unknown> {
  const now = nowSeconds();
  return { sub, iat: now, exp: now + 600 };
}

/** `token`'s signing input with `signature`'s last segment. */
function withSignatureOf(token: string, signature: string): string {
  return token.slice(0, token.lastIndexOf('.')) + signature.slice(signature.lastIndexOf('.'));
}

describe('Signer.checkIssued: the self-check of GenerateJwt', () => {
  it.each(ALGORITHMS)('%s: a token this signer issued passes', (alg) => {
    const signer = createSigner(keys);
    expect(signer.checkIssued(signer.sign(alg, claims('ada@example.com')))).toBe(true);
  });

  it.each(ALGORITHMS)('%s: the signature really is verified: another signature of the same key fails', (alg) => {
    const signer = createSigner(keys);
    const issued = signer.sign(alg, claims('ada@example.com'));
    const other = signer.sign(alg, claims('bob@example.com'));
    // Same header, same key, a well-formed signature: only verifying it over this input tells them apart.
    expect(signer.checkIssued({ ...issued, token: withSignatureOf(issued.token, other.token) })).toBe(false);
  });

  it.each(ALGORITHMS)('%s: a token of another key (same algorithm) fails', (alg) => {
    const issued = createSigner(otherKeys).sign(alg, claims('ada@example.com'));
    expect(createSigner(keys).checkIssued(issued)).toBe(false);
  });

  it.each(['HS256', 'ES256'] as const)('%s: a token of the same key whose header is not the one this signer writes fails, its signature valid', (alg) => {
    const signer = createSigner(keys);
    const kid = activeKid(keys, alg);
    const forged = tokenFor(keys, kid, claims('ada@example.com'), { crit: ['x'] });
    expect(signer.checkIssued({ token: tokenFor(keys, kid, claims('ada@example.com')), kid, alg })).toBe(true);
    expect(signer.checkIssued({ token: forged, kid, alg })).toBe(false);
  });

  it('a token whose header is not this signer\'s fails, even with a signature of its key over it', () => {
    const signer = createSigner(keys);
    const issued = signer.sign('ES256', claims('ada@example.com'));
    expect(signer.checkIssued({ ...issued, alg: 'HS256' })).toBe(false);
    expect(signer.checkIssued({ ...issued, token: issued.token.slice(0, issued.token.lastIndexOf('.')) })).toBe(false);
  });
});
