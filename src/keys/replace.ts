import { JwtGrpcError } from '../base/errors.js';
import type { KeySet } from './key-set.js';

/**
 * Checks that `next` can take over from `current`: every algorithm `current` signs with,
 * `next` signs with too, so no GenerateJwt that works now fails after a reload or a
 * rotation. Throws `ERR_INVALID_KEY` naming the algorithms it would lose. @internal
 */
export function checkKeyReplacement(current: KeySet, next: KeySet): void {
  const lost = current.signingAlgorithms.filter((alg) => next.activeEntry(alg) === undefined);
  if (lost.length > 0) {
    throw new JwtGrpcError(
      'ERR_INVALID_KEY',
      `no key could sign ${lost.join(', ')} any more, which the keys in use sign: activate a key of each before removing its signer`,
      { field: 'keys' },
    );
  }
}
