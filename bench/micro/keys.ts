import { createPrivateKey, createPublicKey, createSecretKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { exportKeys, generateKeys, type KeySet } from '../../src/lib/index.js';
import type { BenchAlgorithm } from '../options/algorithms.js';

/** One algorithm's key, in every form the four libraries want. */
export interface KeyMaterial {
  readonly alg: BenchAlgorithm;
  readonly kid: string;
  /** Private JWK (an oct JWK for HMAC). */
  readonly privateJwk: JsonWebKey;
  /** Public JWK; for HMAC the same oct JWK. */
  readonly publicJwk: JsonWebKey;
  readonly signingKey: KeyObject;
  readonly verificationKey: KeyObject;
  /** PKCS#8 / SPKI PEM for asymmetric keys, the raw secret for HMAC (fast-jwt's documented inputs). */
  readonly signingPemOrSecret: string | Buffer;
  readonly verificationPemOrSecret: string | Buffer;
}

/** The key set of this package and the same keys prepared for the other libraries. */
export interface MicroKeys {
  readonly keySet: KeySet;
  readonly byAlgorithm: ReadonlyMap<BenchAlgorithm, KeyMaterial>;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

function publicJwkOf(jwk: JsonWebKey): JsonWebKey {
  if (jwk.kty === 'oct') return jwk;
  const copy: JsonWebKey = { ...jwk };
  for (const member of PRIVATE_MEMBERS) delete copy[member];
  return copy;
}

/**
 * Generates one key per algorithm with this package's `generateKeys`, exports them with
 * `exportKeys` and derives every other form from those JWKs, so that all four libraries
 * sign and verify with the very same keys.
 */
export async function createMicroKeys(algorithms: readonly BenchAlgorithm[]): Promise<MicroKeys> {
  const keySet = await generateKeys({ algorithms });
  const byAlgorithm = new Map<BenchAlgorithm, KeyMaterial>();
  for (const jwk of exportKeys(keySet, { includePrivate: true }).keys) {
    const alg = jwk.alg as BenchAlgorithm;
    const { kid, alg: _alg, use: _use, ...bare } = jwk;
    const isSecret = bare.kty === 'oct';
    const signingKey = isSecret ? createSecretKey(Buffer.from(bare.k ?? '', 'base64url')) : createPrivateKey({ key: bare, format: 'jwk' });
    const verificationKey = isSecret ? signingKey : createPublicKey(signingKey);
    byAlgorithm.set(alg, {
      alg,
      kid,
      privateJwk: bare,
      publicJwk: publicJwkOf(bare),
      signingKey,
      verificationKey,
      signingPemOrSecret: isSecret ? signingKey.export() : String(signingKey.export({ type: 'pkcs8', format: 'pem' })),
      verificationPemOrSecret: isSecret ? signingKey.export() : String(verificationKey.export({ type: 'spki', format: 'pem' })),
    });
  }
  return { keySet, byAlgorithm };
}
