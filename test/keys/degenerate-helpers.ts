/** Crafted degenerate keys and the forgery they allow, shared by the key, CLI and remote verifier tests. */
import { createHash } from 'node:crypto';

/** A public RSA JWK with modulus `n` (base64url) and public exponent `e`. */
export function rsaJwkWithExponent(n: string, e: bigint): Record<string, unknown> {
  const hex = e.toString(16);
  return { kty: 'RSA', n, e: Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex').toString('base64url') };
}

/** DER prefix of a SHA-256 DigestInfo (RFC 8017 §9.2, note 1). */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

/**
 * An RS256 signature of `input` under any key with e = 1, made without a private key:
 * s^1 mod n = s, so the EMSA-PKCS1-v1_5 encoding of the hash is its own signature.
 */
export function forgeRsaE1(input: string, modulusBytes: number): Buffer {
  const digestInfo = Buffer.concat([SHA256_DIGEST_INFO, createHash('sha256').update(input).digest()]);
  const padding = Buffer.alloc(modulusBytes - 3 - digestInfo.length, 0xff);
  return Buffer.concat([Buffer.from([0, 1]), padding, Buffer.from([0]), digestInfo]);
}

/** A JWS (RS256, `kid`) with `claims`, its signature forged for an e = 1 key of `modulusBytes`. */
export function forgedRs256Token(kid: string, claims: Record<string, unknown>, modulusBytes = 256): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'RS256', kid, typ: 'JWT' })}.${part(claims)}`;
  return `${input}.${forgeRsaE1(input, modulusBytes).toString('base64url')}`;
}
