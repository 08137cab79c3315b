import type { Jwk } from '../algorithms/jwk.js';
import type { KeySet } from './key-set.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';

/** The one name exportKeys' options hold. */
const EXPORT_OPTION_NAMES = optionNames<NonNullable<Parameters<typeof exportKeys>[1]>>({ includePrivate: true });

export type { Jwk } from '../algorithms/jwk.js';

/**
 * Exports a key set as a JWK Set. By default only public verification keys (the set
 * GetJwks serves: no HMAC keys, no private members). `includePrivate: true` exports
 * everything needed to import the same set elsewhere (how cluster workers receive the
 * primary's keys), `deactivated_at` included: treat its result as a secret.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const publicJwks = exportKeys(keys);                       // safe to publish
 * const full = exportKeys(keys, { includePrivate: true });    // secret
 * ```
 */
export function exportKeys(keys: KeySet, options: { includePrivate?: boolean } = {}): { keys: Jwk[] } {
  refuseUnknownOptions(options, EXPORT_OPTION_NAMES, { owner: 'exportKeys' });
  const out: Jwk[] = [];
  for (const { kid, alg, spec, signingKey, verificationKey, deactivatedAt, reference, handle } of keys.entries()) {
    if (options.includePrivate === true) {
      const jwk: Jwk = { ...spec.fullJwk(signingKey, verificationKey), kid, alg };
      // A handle travels as its reference: each process (a cluster worker) opens its own session.
      // A handle that does not sign here (staged, deactivated) must not sign there either.
      if (reference !== undefined)
        Object.assign(jwk, { [reference.member]: reference.ref }, handle === undefined && { key_ops: ['verify'] });
      if (deactivatedAt !== undefined) jwk.deactivated_at = new Date(deactivatedAt * 1000).toISOString();
      out.push(jwk);
      continue;
    }
    const members = spec.publicJwk(verificationKey);
    if (members !== undefined) out.push({ ...members, kid, alg, use: 'sig' });
  }
  return { keys: out };
}
