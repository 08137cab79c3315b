/** RS256 and PS256 (src/algorithms/rsa.ts): size, exponent and private members checked, each refusal saying what is wrong. */
import { type JsonWebKey, type KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { rsa, rsaPss } from '../../src/algorithms/rsa.js';

const RS256 = rsa('sha256');
const PS256 = rsaPss('sha256', 32);

let privateKey: KeyObject;
let publicKey: KeyObject;
let jwk: JsonWebKey;

/**
 * Why the key with one member of its JWK replaced is refused: checkPrivate's reason, or
 * IMPORT_REFUSED where node:crypto refuses the pair itself (OpenSSL 3.5.9 and later check
 * the halves on import; earlier releases import them and leave it to checkPrivate).
 */
function refusalWithMember(name: string, value: string): string | undefined {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: { ...jwk, [name]: value }, format: 'jwk' });
  } catch {
    return IMPORT_REFUSED;
  }
  return RS256.checkPrivate(key);
}
const IMPORT_REFUSED = 'refused by node:crypto on import';

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
    const crt = 'private key does not match its public key: its CRT values (dp, dq, qi) disagree with d, p and q';
    expect([crt, IMPORT_REFUSED]).toContain(refusalWithMember('dp', b64(big(jwk.dp) + 1n)));
    expect([crt, IMPORT_REFUSED]).toContain(refusalWithMember('qi', b64(big(jwk.qi) + 1n)));
    expect(refusalWithMember('d', b64(big(jwk.d) + 2n))).toBe('private key does not match its public key: d does not invert e');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    expect(['private key does not match its public key: n is not p*q', IMPORT_REFUSED]).toContain(
      refusalWithMember('p', other.p as string),
    );
    expect(RS256.checkPrivate(privateKey)).toBeUndefined();
  });

  it('generate a 2048-bit pair that passes every check', async () => {
    const { signingKey, verificationKey } = await PS256.generate();
    expect(verificationKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(PS256.checkKey(verificationKey)).toBeUndefined();
    expect(PS256.checkPrivate(signingKey)).toBeUndefined();
  });
});
