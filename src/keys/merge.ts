import { type KeyEntry, KeySet } from './key-set.js';

/**
 * The key set that rotates from `current` to `next` without failing a token already
 * issued: `next`'s keys first, so its keys sign new tokens of their algorithms, then every
 * key of `current` whose kid `next` lacks, so tokens they signed keep verifying (a kid in
 * both is `next`'s). An algorithm `current` signs and `next` does not stays signed by its
 * current key. Neither input changes.
 *
 * Drop the old keys later, once the last token they signed has expired: a set made from
 * fresh keys alone answers `UNKNOWN_KEY` for every token still outstanding.
 *
 * @example
 * ```ts run
 * // hidden: import { Server } from '@grpc/grpc-js';
 * // hidden: const server = new Server();
 * const current = await generateKeys({ algorithms: ['ES256'] });
 * const jwt = addJwtService(server, { keys: current });
 * // Later: new tokens are signed with the fresh key, tokens of the old one still verify.
 * const rotated = mergeKeySets(current, await generateKeys({ algorithms: ['ES256'] }));
 * jwt.setKeys(rotated);
 * rotated.keys.map((key) => key.active); // [true, false]
 * // hidden: if (String(rotated.keys.map((key) => key.active)) !== 'true,false') throw new Error('not as documented');
 * ```
 */
export function mergeKeySets(current: KeySet, next: KeySet): KeySet {
  const entries: KeyEntry[] = [...next.entries()];
  for (const entry of current.entries()) {
    if (next.entry(entry.kid) === undefined) entries.push(entry);
  }
  return new KeySet(entries);
}
