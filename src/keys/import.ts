import { type KeyObject, createPrivateKey, createPublicKey, createSecretKey } from 'node:crypto';
import { type Algorithm, type AlgorithmSpec, ALGORITHM_SPECS, ALGORITHMS, isAlgorithm } from '../algorithms.js';
import { JwtGrpcError } from '../errors.js';
import { type KeyEntry, KeySet, MAX_KID_LENGTH } from './key-set.js';

/**
 * One entry of a key file: a JWK (private for asymmetric keys that sign, public for
 * verify-only keys, `oct` for HMAC), or a PEM given inline. Both carry `kid` and `alg`.
 */
export type KeyInput =
  | (Record<string, unknown> & { kid: string; alg: string })
  | { kid: string; alg: string; pem: string };

const MIN_RSA_BITS = 2048;

function keyError(kid: string, message: string, cause?: unknown): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_KEY', `key "${kid}": ${message}`, { field: kid, cause });
}

/** The key types each algorithm family accepts, checked against the imported KeyObject. */
function checkKeyType(kid: string, spec: AlgorithmSpec, alg: Algorithm, key: KeyObject): void {
  const details = key.asymmetricKeyDetails;
  switch (spec.family) {
    case 'hmac': {
      const bytes = key.symmetricKeySize ?? 0;
      if (key.type !== 'secret') throw keyError(kid, `${alg} needs an oct (secret) key`);
      if (bytes < spec.hashBytes) {
        throw keyError(kid, `HMAC secret is ${bytes} bytes; ${alg} needs at least ${spec.hashBytes}`);
      }
      return;
    }
    case 'ecdsa': {
      const curve = spec.curve === 'P-256' ? 'prime256v1' : 'secp384r1';
      if (key.asymmetricKeyType !== 'ec' || details?.namedCurve !== curve) {
        throw keyError(kid, `${alg} needs an EC key on ${spec.curve}`);
      }
      return;
    }
    case 'rsa':
    case 'rsa-pss': {
      if (key.asymmetricKeyType !== 'rsa') throw keyError(kid, `${alg} needs an RSA key`);
      if ((details?.modulusLength ?? 0) < MIN_RSA_BITS) {
        throw keyError(kid, `RSA modulus is ${details?.modulusLength} bits; at least ${MIN_RSA_BITS} are required`);
      }
      return;
    }
    case 'eddsa':
      if (key.asymmetricKeyType !== 'ed25519') throw keyError(kid, `${alg} needs an Ed25519 (OKP) key`);
      return;
  }
}

function importOne(input: unknown, index: number): KeyEntry {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new JwtGrpcError('ERR_INVALID_KEY', `keys[${index}] is not an object`, { field: `keys[${index}]` });
  }
  const record = input as Record<string, unknown>;
  const kid = record['kid'];
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) {
    throw new JwtGrpcError('ERR_INVALID_KEY', `keys[${index}] needs a kid of 1 to ${MAX_KID_LENGTH} characters`, {
      field: `keys[${index}].kid`,
    });
  }
  const alg = record['alg'];
  if (!isAlgorithm(alg)) {
    throw keyError(kid, `alg ${JSON.stringify(alg)} is not one of ${ALGORITHMS.join(', ')}`);
  }
  const spec = ALGORITHM_SPECS[alg];
  const keyOps = record['key_ops'];
  const signAllowed = !Array.isArray(keyOps) || keyOps.includes('sign');

  let signingKey: KeyObject | undefined;
  let verificationKey: KeyObject;
  try {
    if (typeof record['pem'] === 'string') {
      const pem = record['pem'];
      const isPrivate = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/.test(pem);
      signingKey = isPrivate ? createPrivateKey(pem) : undefined;
      verificationKey = signingKey === undefined ? createPublicKey(pem) : createPublicKey(signingKey);
    } else if (record['kty'] === 'oct') {
      if (typeof record['k'] !== 'string') throw keyError(kid, 'oct key has no "k"');
      signingKey = createSecretKey(Buffer.from(record['k'], 'base64url'));
      verificationKey = signingKey;
    } else {
      // node:crypto ignores members it does not know (kid, alg, use, key_ops).
      const jwk = record as import('node:crypto').JsonWebKey;
      signingKey = typeof record['d'] === 'string' ? createPrivateKey({ key: jwk, format: 'jwk' }) : undefined;
      verificationKey = signingKey === undefined ? createPublicKey({ key: jwk, format: 'jwk' }) : createPublicKey(signingKey);
    }
  } catch (err) {
    if (err instanceof JwtGrpcError) throw err;
    // node:crypto's message says what is malformed without echoing the key.
    throw keyError(kid, `cannot import: ${(err as Error).message}`, err);
  }
  checkKeyType(kid, spec, alg, signingKey ?? verificationKey);
  return { kid, alg, spec, signingKey: signAllowed ? signingKey : undefined, verificationKey };
}

/**
 * Imports keys from a JWK Set (`{ keys: [...] }`), each entry a JWK or `{ kid, alg, pem }`.
 * Per algorithm the first key able to sign becomes the active signer; the others only
 * verify. HMAC secrets shorter than the hash output and RSA keys under 2048 bits are refused.
 *
 * @example
 * ```ts
 * const keys = importKeys({ keys: [{ kty: 'oct', k: secretBase64url, kid: 'hs-2026', alg: 'HS256' }] });
 * ```
 */
export function importKeys(jwks: unknown): KeySet {
  const list = typeof jwks === 'object' && jwks !== null ? (jwks as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list) || list.length === 0) {
    throw new JwtGrpcError('ERR_INVALID_KEY', 'expected a JWK Set: an object with a non-empty "keys" array', {
      field: 'keys',
    });
  }
  return new KeySet(list.map(importOne));
}
