/**
 * Hand-made JWS tokens for the token tests. Everything here talks to node:crypto
 * directly (never to src/tokens), so the tokens are an independent reference.
 */
import { type KeyObject, constants, createHmac, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { expect } from 'vitest';
import {
  type Algorithm,
  type Jwk,
  type KeySet,
  type VerifiedToken,
  type VerifyFailureReason,
  type VerifyResult,
  exportKeys,
} from '../../src/lib/index.js';

export { nowSeconds } from '../../bench/kit/jwt-servers.js';

/** base64url of a string or bytes, unpadded. */
export function b64u(data: string | Uint8Array): string {
  return Buffer.from(data).toString('base64url');
}

/** base64url of the JSON text of `value`. */
export function b64json(value: unknown): string {
  return b64u(JSON.stringify(value));
}

/** The private (or secret) material of one key of a set, taken from the full export. */
export function privateJwk(keys: KeySet, kid: string): Jwk {
  const jwk = exportKeys(keys, { includePrivate: true }).keys.find((k) => k.kid === kid);
  if (jwk === undefined) throw new Error(`no key ${kid} in the set`);
  return jwk;
}

/** The kid of the active (signing) key of `alg`. */
export function activeKid(keys: KeySet, alg: Algorithm): string {
  const info = keys.keys.find((k) => k.alg === alg && k.active);
  if (info === undefined) throw new Error(`no active ${alg} key`);
  return info.kid;
}

/** A node:crypto key able to sign for `alg`: a Buffer secret for HMAC, a private KeyObject otherwise. */
export function signingMaterial(keys: KeySet, kid: string): Buffer | KeyObject {
  const jwk = privateJwk(keys, kid);
  if (jwk.kty === 'oct') return Buffer.from(jwk.k as string, 'base64url');
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

/** The public KeyObject of an asymmetric key of the set. */
export function publicKeyObject(keys: KeySet, kid: string): KeyObject {
  return createPublicKey({ key: privateJwk(keys, kid), format: 'jwk' });
}

const HASHES: Record<Algorithm, string | null> = {
  HS256: 'sha256',
  HS384: 'sha384',
  HS512: 'sha512',
  ES256: 'sha256',
  ES384: 'sha384',
  RS256: 'sha256',
  PS256: 'sha256',
  EdDSA: null,
};

/** The raw JWS signature (RFC 7518) of `input` under `alg`, made with node:crypto alone. */
export function rawSignature(alg: Algorithm, key: Buffer | KeyObject, input: string): Buffer {
  const data = Buffer.from(input);
  const hash = HASHES[alg];
  switch (alg) {
    case 'HS256':
    case 'HS384':
    case 'HS512':
      return createHmac(hash as string, key)
        .update(data)
        .digest();
    case 'ES256':
    case 'ES384':
      return sign(hash, data, { key: key as KeyObject, dsaEncoding: 'ieee-p1363' });
    case 'RS256':
      return sign(hash, data, key as KeyObject);
    case 'PS256':
      return sign(hash, data, { key: key as KeyObject, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
    case 'EdDSA':
      return sign(null, data, key as KeyObject);
  }
}

/** A compact JWS of the given header and payload (objects are JSON-encoded, strings taken as the raw text). */
export function makeToken(header: unknown, payload: unknown, alg: Algorithm, key: Buffer | KeyObject): string {
  const encode = (part: unknown): string => (typeof part === 'string' ? b64u(part) : b64json(part));
  const input = `${encode(header)}.${encode(payload)}`;
  return `${input}.${rawSignature(alg, key, input).toString('base64url')}`;
}

/** A token signed by the set's key `kid` (its alg), with the standard header unless overridden. */
export function tokenFor(keys: KeySet, kid: string, payload: unknown, headerExtra: Record<string, unknown> = {}): string {
  const alg = privateJwk(keys, kid).alg;
  return makeToken({ alg, typ: 'JWT', kid, ...headerExtra }, payload, alg, signingMaterial(keys, kid));
}

/** Replaces one character of `text` at `index` by another base64url character. */
export function flipChar(text: string, index: number): string {
  const c = text[index];
  const replacement = c === 'A' ? 'B' : 'A';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

export function expectValid(result: VerifyResult): VerifiedToken {
  if (!result.valid) throw new Error(`expected a valid token, got ${result.reason}: ${result.message}`);
  return result;
}

export function expectReason(result: VerifyResult, reason: VerifyFailureReason): void {
  expect(result.valid ? 'valid' : result.reason).toBe(reason);
  if (!result.valid) {
    expect(typeof result.message).toBe('string');
    expect(result.message.length).toBeGreaterThan(0);
  }
}
