import { describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  JwtGrpcError,
  createSigner,
  createVerifier,
  generateKeys,
  importKeys,
  exportKeys,
  mergeKeySets,
} from '../../src/lib/index.js';

const now = (): number => Math.floor(Date.now() / 1000);

describe('mergeKeySets', () => {
  it('signs with the new keys and still verifies tokens of the old ones', async () => {
    const current = await generateKeys({ algorithms: ['ES256', 'HS256'] });
    const next = await generateKeys({ algorithms: ['ES256'] });
    const old = createSigner(current).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 60 }).token;

    const merged = mergeKeySets(current, next);

    const fresh = createSigner(merged).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 60 });
    expect(fresh.kid).toBe(next.keys[0]?.kid);
    const verifier = createVerifier(merged, { audience: ANY_AUDIENCE });
    expect(verifier.verify(old)).toMatchObject({ valid: true });
    expect(verifier.verify(fresh.token)).toMatchObject({ valid: true });
    // What the README once showed: the fresh keys alone fail every outstanding token.
    expect(createVerifier(next, { audience: ANY_AUDIENCE }).verify(old)).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
  });

  it('keeps signing an algorithm only the current set signs, and orders new keys first', async () => {
    const current = await generateKeys({ algorithms: ['ES256', 'HS256'] });
    const next = await generateKeys({ algorithms: ['ES256'] });
    const merged = mergeKeySets(current, next);
    expect(merged.keys.map((key) => [key.kid, key.active])).toEqual([
      [next.keys[0]?.kid, true],
      [current.keys[0]?.kid, false],
      [current.keys[1]?.kid, true],
    ]);
    expect([...merged.signingAlgorithms].sort()).toEqual(['ES256', 'HS256']);
  });

  it('takes a kid found in both sets from the new set, once', async () => {
    const current = await generateKeys({ algorithms: ['EdDSA'] });
    const [jwk] = exportKeys(current, { includePrivate: true }).keys;
    const publicOnly = importKeys({ keys: exportKeys(current).keys });
    const merged = mergeKeySets(current, publicOnly);
    expect(merged.keys).toEqual([{ kid: jwk?.kid, alg: 'EdDSA', active: false, canSign: false, deactivatedAt: undefined }]);
    expect(() => createSigner(merged).sign('EdDSA', { sub: 'a', iat: now(), exp: now() + 60 })).toThrow(JwtGrpcError);
  });
});
