import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { exportJwk } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/**
 * Compares two strings in time that depends only on their length, so an attacker
 * cannot learn how many leading characters of a forged HMAC were right.
 */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** HS256/384/512 ([RFC 7518 §3.2](https://www.rfc-editor.org/rfc/rfc7518#section-3.2)): HMAC with `hash`, whose secret must be at least `hashBytes` long. */
export function hmac(hash: string, hashBytes: number): AlgorithmSpec {
  return {
    symmetric: true,
    prepareSign: (key) => (input) => createHmac(hash, key).update(input).digest('base64url'),
    // Compared as base64url text: no decoding of the signature, and only the canonical
    // encoding of the right MAC matches (stricter than comparing decoded bytes).
    prepareVerify: (key) => (input, signature) => constantTimeEqual(createHmac(hash, key).update(input).digest('base64url'), signature),
    checkKey(key) {
      if (key.type !== 'secret') return 'needs an oct (secret) key';
      const bytes = key.symmetricKeySize ?? 0;
      return bytes < hashBytes ? `needs an HMAC secret of at least ${hashBytes} bytes, got ${bytes}` : undefined;
    },
    // A secret has no structure to get wrong beyond its length, and no halves.
    checkStrength: () => undefined,
    checkPrivate: () => undefined,
    async generate() {
      const secret = createSecretKey(randomBytes(hashBytes));
      return { signingKey: secret, verificationKey: secret };
    },
    publicJwk: () => undefined,
    // A verify-only secret must stay verify-only after a round trip: `k` alone would sign.
    fullJwk: (signingKey, verificationKey) =>
      signingKey === undefined ? { ...exportJwk(verificationKey), key_ops: ['verify'] } : exportJwk(signingKey),
  };
}
