/** EdDSA on Ed25519 (src/algorithms/eddsa.ts): signs and verifies, and refuses public keys anyone could forge for. */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519PointProblem, eddsa } from '../../src/algorithms/eddsa.js';

const P = 2n ** 255n - 19n;

/** A y coordinate as Ed25519's 32 little-endian bytes, with the sign bit of x set or not. */
function encode(y: bigint, signBit = false): Buffer {
  const bytes = Buffer.from(y.toString(16).padStart(64, '0'), 'hex').reverse();
  if (signBit) bytes[31] = (bytes[31] as number) | 0x80;
  return bytes;
}

describe('ed25519PointProblem', () => {
  it('accepts a real public key', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
    expect(ed25519PointProblem(Buffer.from(x, 'base64url'))).toBeUndefined();
  });

  it('refuses the wrong length', () => {
    expect(ed25519PointProblem(Buffer.alloc(31))).toBe('public key is 31 bytes, not 32');
  });

  it.each([
    ['the identity (y = 1)', 1n],
    ['y = p - 1 (order 2)', P - 1n],
    ['y = 0 (order 4)', 0n],
  ])('refuses a point of small order: %s, with either sign bit', (_name, y) => {
    expect(ed25519PointProblem(encode(y))).toBe('public key is a point of small order');
    expect(ed25519PointProblem(encode(y, true))).toBe('public key is a point of small order');
  });

  it('refuses an order-8 point from libsodium’s blocklist', () => {
    const y8 = Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex');
    expect(ed25519PointProblem(y8)).toBe('public key is a point of small order');
  });

  it('refuses a non-canonical y (p <= y < 2^255)', () => {
    expect(ed25519PointProblem(encode(P))).toBe('public key is a non-canonical encoding (y >= p)');
    expect(ed25519PointProblem(encode(P + 1n))).toBe('public key is a non-canonical encoding (y >= p)');
  });

  it('refuses a y with no x on the curve', () => {
    // y = 2: (y^2 - 1) / (d y^2 + 1) is not a square mod p.
    expect(ed25519PointProblem(encode(2n))).toBe('public key is not a point on Ed25519');
  });
});

describe('eddsa', () => {
  const spec = eddsa();

  it('signs and verifies with a generated key, and the signature is bound to the input', async () => {
    const { signingKey, verificationKey } = await spec.generate();
    const signature = spec.prepareSign(signingKey)(Buffer.from('a.b'));
    expect(spec.prepareVerify(verificationKey)(Buffer.from('a.b'), signature)).toBe(true);
    expect(spec.prepareVerify(verificationKey)(Buffer.from('a.c'), signature)).toBe(false);
    expect(spec.checkStrength(verificationKey)).toBeUndefined();
  });

  it('refuses a key of another type', () => {
    expect(spec.checkKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey)).toBe('needs an Ed25519 (OKP) key');
    expect(spec.checkKey(generateKeyPairSync('ed25519').publicKey)).toBeUndefined();
  });
});
