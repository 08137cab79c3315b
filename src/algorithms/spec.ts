import type { Buffer } from 'node:buffer';
import type { KeyObject } from 'node:crypto';
import type { JwkMembers } from './jwk.js';

/**
 * Returns the base64url signature of a JWS signing input (`header.payload`, as UTF-8 bytes);
 * the key is bound in. Bytes, not text: the signer encodes its input once for signing and
 * for the self-check that verifies it.
 */
export type SignInput = (input: Buffer) => string;

/** Checks a base64url signature over a JWS signing input (UTF-8 bytes); the key is bound in. */
export type CheckSignature = (input: Buffer, signature: string) => boolean;

/** A fresh key: a private and a public KeyObject, or one secret in both places. */
export interface GeneratedKey {
  readonly signingKey: KeyObject;
  readonly verificationKey: KeyObject;
}

/**
 * Everything one JWS algorithm needs from node:crypto, resolved once: the table in
 * index.ts hands each consumer (keys, signer, verifier) its entry, so no code outside
 * this folder asks which family an algorithm belongs to. Each family's file (hmac.ts,
 * ecdsa.ts, rsa.ts, eddsa.ts) makes its entries.
 */
export interface AlgorithmSpec {
  /** True for HMAC: one secret signs and verifies, and it is never published. */
  readonly symmetric: boolean;
  /** The signing closure for a key: everything but the input is bound once, here. */
  prepareSign(key: KeyObject): SignInput;
  /** The verifying closure for a key (a secret, or a public key). */
  prepareVerify(key: KeyObject): CheckSignature;
  /** What is wrong with `key` for this algorithm ("needs an RSA key"), or undefined when it fits. */
  checkKey(key: KeyObject): string | undefined;
  /**
   * What makes `key` (of the right kind and size) degenerate, so that tokens could be forged
   * without its private part: an RSA exponent of 1, a small-order Ed25519 point. Undefined when sound.
   */
  checkStrength(key: KeyObject): string | undefined;
  /** How a private key's own members disagree (RSA: n is not p*q...), or undefined; a public key or secret has none. */
  checkPrivate(key: KeyObject): string | undefined;
  /** A fresh key for this algorithm. */
  generate(): Promise<GeneratedKey>;
  /** The public members of a verification key's JWK; undefined for a secret, which is never published. */
  publicJwk(key: KeyObject): JwkMembers | undefined;
  /** Every member needed to import the same key elsewhere, private ones included (a secret!). */
  fullJwk(signingKey: KeyObject | undefined, verificationKey: KeyObject): JwkMembers;
}
