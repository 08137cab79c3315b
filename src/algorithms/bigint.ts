/** Arithmetic on key members as BigInts: load-time checks only, never on a call's path. */
import { Buffer } from 'node:buffer';

/** A base64url big-endian unsigned integer (an RSA JWK member) as a BigInt. */
export function bigIntFromBase64url(value: string): bigint {
  const hex = Buffer.from(value, 'base64url').toString('hex');
  return hex.length === 0 ? 0n : BigInt(`0x${hex}`);
}

/** A little-endian byte string (an Ed25519 point) as a BigInt. */
export function bigIntFromLittleEndian(bytes: Buffer): bigint {
  const hex = Buffer.from(bytes).reverse().toString('hex');
  return hex.length === 0 ? 0n : BigInt(`0x${hex}`);
}

/** `base ** exponent mod modulus`, by square and multiply. */
export function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if ((e & 1n) === 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

export function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a, b];
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}
