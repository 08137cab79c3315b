/** What an asymmetric family publishes (src/algorithms/key-pair.ts): the public members, never a private one. */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { asymmetricJwk, exportJwk } from '../../src/algorithms/key-pair.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

describe('asymmetricJwk', () => {
  it.each([
    ['EC', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }), ['kty', 'crv', 'x', 'y']],
    ['OKP', () => generateKeyPairSync('ed25519'), ['kty', 'crv', 'x']],
    ['RSA', () => generateKeyPairSync('rsa', { modulusLength: 2048 }), ['kty', 'n', 'e']],
  ] as const)('%s: publicJwk of the private key holds only the public members', (_kty, pair, members) => {
    const { privateKey, publicKey } = pair();
    const published = asymmetricJwk.publicJwk(privateKey) as Record<string, unknown>;
    expect(Object.keys(published).sort()).toEqual([...members].sort());
    for (const name of PRIVATE_MEMBERS) expect(published).not.toHaveProperty(name);
    expect(published).toEqual(exportJwk(publicKey));
  });

  it('fullJwk carries the private key when there is one, the public key otherwise', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(asymmetricJwk.fullJwk(privateKey, publicKey)).toHaveProperty('d');
    expect(asymmetricJwk.fullJwk(undefined, publicKey)).not.toHaveProperty('d');
  });
});
