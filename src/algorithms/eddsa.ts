import { Buffer } from 'node:buffer';
import { type KeyObject, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { bigIntFromLittleEndian, modPow } from './bigint.js';
import { asymmetricJwk, exportJwk, generatePair } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/** The field prime of Curve25519, 2^255 - 19, and the Edwards curve constant d ([RFC 8032 §5.1](https://www.rfc-editor.org/rfc/rfc8032#section-5.1)). */
const P = 2n ** 255n - 19n;
const D = ((P - 121665n) * modPow(121666n, P - 2n, P)) % P;

/**
 * The y coordinates of Ed25519's 8 points of small order (orders 1, 2, 4 and 8; libsodium's
 * blocklist, ed25519-dalek's `is_weak`): 1 (the identity), p-1, 0, and ±y8. A public key at
 * one of them verifies a signature whose R is a small-order point for any message, so anyone
 * could forge tokens; with the sign bit either way, each encodes the same weak point.
 */
const Y8 = bigIntFromLittleEndian(Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex'));
const SMALL_ORDER_Y: ReadonlySet<bigint> = new Set([1n, P - 1n, 0n, Y8, P - Y8]);

/** What is wrong with an Ed25519 public key's 32 bytes, or undefined when it is a sound point. */
export function ed25519PointProblem(encoded: Buffer): string | undefined {
  if (encoded.length !== 32) return `public key is ${encoded.length} bytes, not 32`;
  const y = bigIntFromLittleEndian(encoded) & ((1n << 255n) - 1n);
  // The 19 values from p to 2^255 - 1 encode y - p: another encoding of a point, not one of its own.
  if (y >= P) return 'public key is a non-canonical encoding (y >= p)';
  if (SMALL_ORDER_Y.has(y)) return 'public key is a point of small order';
  // x^2 = (y^2 - 1) / (d y^2 + 1) must have a root: Euler's criterion.
  const y2 = (y * y) % P;
  const x2 = ((y2 - 1n + P) * modPow((D * y2 + 1n + P) % P, P - 2n, P)) % P;
  return modPow(x2, (P - 1n) / 2n, P) === 1n ? undefined : 'public key is not a point on Ed25519';
}

/** The public key bytes of an Ed25519 KeyObject, private or public. */
function publicBytes(key: KeyObject): Buffer {
  return Buffer.from(exportJwk(key).x ?? '', 'base64url');
}

/** EdDSA ([RFC 8037](https://www.rfc-editor.org/rfc/rfc8037)) on Ed25519: the curve fixes the hash, so node:crypto takes none. */
export function eddsa(): AlgorithmSpec {
  return {
    symmetric: false,
    prepareSign: (key) => (input) => cryptoSign(null, input, key).toString('base64url'),
    prepareVerify: (key) => (input, signature) => cryptoVerify(null, input, key, Buffer.from(signature, 'base64url')),
    checkKey: (key) => (key.asymmetricKeyType === 'ed25519' ? undefined : 'needs an Ed25519 (OKP) key'),
    checkStrength: (key) => ed25519PointProblem(publicBytes(key)),
    // OpenSSL derives the public key from the seed: the file's x is compared with it on import.
    checkPrivate: () => undefined,
    async generate() {
      const { privateKey, publicKey } = await generatePair('ed25519');
      return { signingKey: privateKey, verificationKey: publicKey };
    },
    ...asymmetricJwk,
  };
}
