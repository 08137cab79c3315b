import type { JsonWebKey } from 'node:crypto';
import type { Algorithm } from '../algorithms.js';
import type { KeySet } from './key-set.js';

/** A JWK as jwt-grpc exports it: always with kid and alg. */
export type Jwk = JsonWebKey & { kid: string; alg: Algorithm; use?: 'sig' };

/**
 * Exports a key set as a JWK Set. By default only public verification keys (the set
 * GetJwks serves: no HMAC keys, no private members). `includePrivate: true` exports
 * everything needed to import the same set elsewhere (how cluster workers receive the
 * primary's keys): treat its result as a secret.
 *
 * @example
 * ```ts
 * const publicJwks = exportKeys(keys);                       // safe to publish
 * const full = exportKeys(keys, { includePrivate: true });    // secret
 * ```
 */
export function exportKeys(keys: KeySet, options: { includePrivate?: boolean } = {}): { keys: Jwk[] } {
  const out: Jwk[] = [];
  for (const entry of keys.entries()) {
    if (options.includePrivate === true) {
      const material = entry.signingKey ?? entry.verificationKey;
      const jwk = material.export({ format: 'jwk' });
      // A verify-only key stays verify-only after a round trip.
      const keyOps = entry.signingKey === undefined && entry.spec.family === 'hmac' ? { key_ops: ['verify'] } : {};
      out.push({ ...jwk, ...keyOps, kid: entry.kid, alg: entry.alg });
    } else if (entry.spec.family !== 'hmac') {
      const { kty, crv, x, y, n, e } = entry.verificationKey.export({ format: 'jwk' });
      const members = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined));
      out.push({ ...members, kid: entry.kid, alg: entry.alg, use: 'sig' });
    }
  }
  return { keys: out };
}
