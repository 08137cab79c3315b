import { beforeAll, describe, expect, it } from 'vitest';
import { ALGORITHMS, type KeySet, exportKeys, generateKeys } from '../../src/lib/index.js';

let keys: KeySet;

beforeAll(async () => {
  keys = await generateKeys();
});

const byteLength = (b64url: unknown): number => Buffer.from(b64url as string, 'base64url').length;

describe('generateKeys', () => {
  it('makes one active signing key per algorithm by default, with distinct kids named after the algorithm', () => {
    expect([...keys.signingAlgorithms].sort()).toEqual([...ALGORITHMS].sort());
    expect(keys.keys).toHaveLength(ALGORITHMS.length);
    expect(new Set(keys.keys.map((k) => k.kid)).size).toBe(ALGORITHMS.length);
    for (const info of keys.keys) {
      expect(info.active).toBe(true);
      expect(info.canSign).toBe(true);
      expect(info.kid.startsWith(`${info.alg.toLowerCase()}-`)).toBe(true);
    }
  });

  it('makes keys of the size each algorithm needs', () => {
    const byAlg = Object.fromEntries(exportKeys(keys, { includePrivate: true }).keys.map((k) => [k.alg, k]));
    expect(byteLength(byAlg['HS256']?.k)).toBe(32);
    expect(byteLength(byAlg['HS384']?.k)).toBe(48);
    expect(byteLength(byAlg['HS512']?.k)).toBe(64);
    expect(byAlg['ES256']).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(byAlg['ES384']).toMatchObject({ kty: 'EC', crv: 'P-384' });
    expect(byAlg['EdDSA']).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(byteLength(byAlg['RS256']?.n) * 8).toBe(2048);
    expect(byteLength(byAlg['PS256']?.n) * 8).toBe(2048);
    // Separate keys for RS256 and PS256.
    expect(byAlg['RS256']?.n).not.toBe(byAlg['PS256']?.n);
  });

  it('two calls make different keys and kids', async () => {
    const [a, b] = await Promise.all([generateKeys({ algorithms: ['HS256', 'EdDSA'] }), generateKeys({ algorithms: ['HS256', 'EdDSA'] })]);
    expect(a.keys.map((k) => k.kid)).not.toEqual(b.keys.map((k) => k.kid));
    const material = (set: KeySet) => exportKeys(set, { includePrivate: true }).keys.map((k) => k.k ?? k.d);
    const [ma, mb] = [material(a), material(b)];
    for (const value of ma) expect(mb).not.toContain(value);
  });

  it('takes a subset, once per algorithm, in the order given', async () => {
    const set = await generateKeys({ algorithms: ['EdDSA', 'HS256', 'EdDSA'] });
    expect(set.keys.map((k) => k.alg)).toEqual(['EdDSA', 'HS256']);
    expect(set.signingAlgorithms).toEqual(['EdDSA', 'HS256']);
  });

  it.each([
    ['an empty list', []],
    ['alg none', ['none']],
    ['a lower-case name', ['es256']],
    ['an unsupported algorithm', ['HS256', 'RS512']],
    ['a string instead of a list', 'ES256'],
  ])('%s is ERR_INVALID_OPTION', async (_what, algorithms) => {
    await expect(generateKeys({ algorithms: algorithms as string[] })).rejects.toMatchObject({
      name: 'JwtGrpcError',
      code: 'ERR_INVALID_OPTION',
      field: 'algorithms',
    });
  });
});
