import { Buffer } from 'node:buffer';
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { exportJwk } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/**
 * Whether `signature` is `mac` in canonical base64url: no padding (RFC 7515 §2), zero pad
 * bits (RFC 4648 §3.5). Node's decoder skips characters it does not read and ignores pad
 * bits, so many spellings decode to the right bytes; only the one the signer writes is taken,
 * so a token has one signature. The spelling check reads only the caller's own text; the
 * bytes are then compared with `timingSafeEqual`, in time that does not depend on how many
 * leading bytes of a forged MAC were right.
 */
function macMatches(mac: Buffer, signature: string): boolean {
  const decoded = Buffer.from(signature, 'base64url');
  if (decoded.length !== mac.length || decoded.toString('base64url') !== signature) return false;
  return timingSafeEqual(decoded, mac);
}

/** HS256/384/512 ([RFC 7518 §3.2](https://www.rfc-editor.org/rfc/rfc7518#section-3.2)): HMAC with `hash`, whose secret must be at least `hashBytes` long. */
export function hmac(hash: string, hashBytes: number): AlgorithmSpec {
  return {
    symmetric: true,
    prepareSign: (key) => (input) => createHmac(hash, key).update(input).digest('base64url'),
    prepareVerify: (key) => (input, signature) => macMatches(createHmac(hash, key).update(input).digest(), signature),
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
