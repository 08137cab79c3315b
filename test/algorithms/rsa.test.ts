/** RS256 and PS256 (src/algorithms/rsa.ts): size, exponent and private members checked, each refusal saying what is wrong. */
import { type JsonWebKey, type KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { rsa, rsaPss } from '../../src/algorithms/rsa.js';

const RS256 = rsa('sha256');
const PS256 = rsaPss('sha256', 32);

let privateKey: KeyObject;
let publicKey: KeyObject;
let jwk: JsonWebKey;

/** The key with one member of its JWK replaced. */
function withMember(name: string, value: string): KeyObject {
  return createPrivateKey({ key: { ...jwk, [name]: value }, format: 'jwk' });
}

const b64 = (n: bigint) =>
  Buffer.from(n.toString(16).padStart(n.toString(16).length + (n.toString(16).length % 2), '0'), 'hex').toString('base64url');
const big = (v: string | undefined) => BigInt(`0x${Buffer.from(v ?? '', 'base64url').toString('hex')}`);

beforeAll(() => {
  ({ privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 }));
  jwk = privateKey.export({ format: 'jwk' });
});

describe('RS256 and PS256', () => {
  it('sign and verify, PKCS#1 v1.5 and PSS not interchangeable', () => {
    const rs = RS256.prepareSign(privateKey)(Buffer.from('a.b'));
    const ps = PS256.prepareSign(privateKey)(Buffer.from('a.b'));
    expect(RS256.prepareVerify(publicKey)(Buffer.from('a.b'), rs)).toBe(true);
    expect(PS256.prepareVerify(publicKey)(Buffer.from('a.b'), ps)).toBe(true);
    expect(RS256.prepareVerify(publicKey)(Buffer.from('a.c'), rs)).toBe(false);
    expect(RS256.prepareVerify(publicKey)(Buffer.from('a.b'), ps)).toBe(false);
    expect(PS256.prepareVerify(publicKey)(Buffer.from('a.b'), rs)).toBe(false);
  });

  it('accept a sound 2048-bit key', () => {
    expect(RS256.checkKey(publicKey)).toBeUndefined();
    expect(RS256.checkStrength(publicKey)).toBeUndefined();
    expect(RS256.checkPrivate(privateKey)).toBeUndefined();
    expect(RS256.checkPrivate(publicKey), 'a public key has no private members').toBeUndefined();
  });

  it('refuse a short modulus and another key type', () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(RS256.checkKey(short)).toBe('needs an RSA modulus of at least 2048 bits, got 1024');
    expect(PS256.checkKey(generateKeyPairSync('ed25519').publicKey)).toBe('needs an RSA key');
  });

  it('refuse a small, an even or a huge public exponent', () => {
    const n = jwk.n as string;
    const publicWith = (e: bigint) => createPublicKey({ key: { kty: 'RSA', n, e: b64(e) }, format: 'jwk' });
    expect(RS256.checkStrength(publicWith(3n))).toBe('public exponent 3 is below 65537');
    expect(RS256.checkStrength(publicWith(65538n))).toBe('public exponent is even');
    expect(RS256.checkStrength(publicWith(2n ** 256n + 1n))).toBe('public exponent is 256 bits or longer');
    expect(RS256.checkStrength(publicWith(2n ** 255n + 1n))).toBeUndefined();
  });

  it('refuse private members that disagree, naming which', () => {
    expect(RS256.checkPrivate(withMember('dp', b64(big(jwk.dp) + 1n)))).toBe(
      'private key does not match its public key: its CRT values (dp, dq, qi) disagree with d, p and q',
    );
    expect(RS256.checkPrivate(withMember('qi', b64(big(jwk.qi) + 1n)))).toMatch(/CRT values/);
    expect(RS256.checkPrivate(withMember('d', b64(big(jwk.d) + 2n)))).toBe(
      'private key does not match its public key: d does not invert e',
    );
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    expect(RS256.checkPrivate(withMember('p', other.p as string))).toBe('private key does not match its public key: n is not p*q');
  });

  it('generate a 2048-bit pair that passes every check', async () => {
    const { signingKey, verificationKey } = await PS256.generate();
    expect(verificationKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(PS256.checkKey(verificationKey)).toBeUndefined();
    expect(PS256.checkPrivate(signingKey)).toBeUndefined();
  });
});
