/**
 * What the Redis revocation store keeps in Redis, and the one script that writes it.
 *
 * Keys, under the prefix (default `jwt-grpc:`):
 * - `PREFIX revoked:JTI`: one string per revocation, `{"expiresAt":...,"reason":...,"statusIndex":...}`,
 *   with `EX` = the token's remaining lifetime, so Redis drops it when the token could no
 *   longer verify anyway.
 * - `PREFIX version`: a counter raised by every revocation. A replica remembers the value
 *   its memory matches; a different value means it missed something (a Pub/Sub message
 *   lost while it was away, Redis restarted empty) and it rescans the `revoked:` keys.
 * - `PREFIX status-index`: the next free status-list index, raised with INCRBY.
 * - Channel `PREFIX revocations`: `VERSION JSON` per revocation, JSON with the jti.
 *
 * Why keys with a counter rather than a Stream: each entry expires on its own with its
 * token (a Stream trims by age or length, not by each token's `exp`), the memory is one
 * key per live revocation, and the resync that a counter triggers reads exactly what is
 * live. The cost is a SCAN of the keyspace when a replica is behind, which is rare.
 */
import { decodeRecord, encodeRecord, isRecordProblem } from './record-codec.js';
import type { Revocation } from '../contracts/revocation-store.js';

/**
 * The names one store uses, all under its prefix.
 *
 * @example
 * ```ts
 * const key = redisKeys('jwt-grpc:').revokedPrefix + jti;
 * ```
 */
export interface RedisKeys {
  readonly revokedPrefix: string;
  /** SCAN MATCH pattern of every revocation key, the prefix's glob characters escaped. */
  readonly revokedPattern: string;
  readonly version: string;
  readonly statusIndex: string;
  readonly channel: string;
}

/**
 * The key and channel names under one prefix.
 *
 * @example
 * ```ts
 * const { version, channel } = redisKeys('jwt-grpc:'); // 'jwt-grpc:version', 'jwt-grpc:revocations'
 * ```
 */
export function redisKeys(prefix: string): RedisKeys {
  const revokedPrefix = `${prefix}revoked:`;
  return {
    revokedPrefix,
    revokedPattern: `${revokedPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
    version: `${prefix}version`,
    statusIndex: `${prefix}status-index`,
    channel: `${prefix}revocations`,
  };
}

/**
 * KEYS[1] the revocation, KEYS[2] the version; ARGV: value, EX seconds, channel, message.
 * One script, so the three writes are one step on the server: no replica or later start
 * sees the entry without the version that announces it. INCR runs first: it is the only
 * write that can fail (the counter overwritten with text, a read-only replica, OOM), and
 * a script that fails there has written nothing.
 *
 * @example
 * ```ts
 * await client.sendCommand(['EVAL', REVOKE_SCRIPT, '2', keys.revokedPrefix + jti, keys.version, value, '600', keys.channel, message]);
 * ```
 */
export const REVOKE_SCRIPT = `
local version = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('PUBLISH', ARGV[3], version .. ' ' .. ARGV[4])
return version
`;

/**
 * The stored value: the revocation without its jti, which the key holds (the record codec's JSON).
 *
 * @example
 * ```ts
 * encodeValue({ jti: 'a1', expiresAt: 1795606973, statusIndex: 7 }); // '{"expiresAt":1795606973,"statusIndex":7}'
 * ```
 */
export function encodeValue(revocation: Revocation): string {
  return encodeRecord(revocation, false);
}

/**
 * The Pub/Sub payload after the version: the whole revocation, as a line of the revocations file.
 *
 * @example
 * ```ts
 * encodeMessage({ jti: 'a1', expiresAt: 1795606973 }); // '{"jti":"a1","expiresAt":1795606973}'
 * ```
 */
export function encodeMessage(revocation: Revocation): string {
  return encodeRecord(revocation);
}

/**
 * The revocation a `revoked:` key holds, or undefined when its value is not one (the record
 * codec refuses it, as the file store would).
 *
 * @example
 * ```ts
 * decodeValue('a1', '{"expiresAt":1795606973}'); // { jti: 'a1', expiresAt: 1795606973 }
 * ```
 */
export function decodeValue(jti: string, value: string): Revocation | undefined {
  const read = decodeRecord(value, jti);
  return isRecordProblem(read) ? undefined : read;
}

/**
 * `VERSION JSON` from the channel, or undefined when the message is not one.
 *
 * @example
 * ```ts
 * decodeMessage('12 {"jti":"a1","expiresAt":1795606973}'); // { version: 12, revocation: { jti: 'a1', expiresAt: 1795606973 } }
 * ```
 */
export function decodeMessage(message: string): { readonly version: number; readonly revocation: Revocation } | undefined {
  const space = message.indexOf(' ');
  const version = Number(message.slice(0, space));
  if (space < 1 || !Number.isSafeInteger(version)) return undefined;
  const revocation = decodeRecord(message.slice(space + 1));
  return isRecordProblem(revocation) ? undefined : { version, revocation };
}

/**
 * The counter as GET returns it: null before the first revocation (or after Redis lost
 * it) reads as 0, a value that is no integer as -1 (never equal to a replica's own).
 *
 * @example
 * ```ts
 * parseVersion(null); // 0
 * parseVersion('41'); // 41
 * ```
 */
export function parseVersion(reply: unknown): number {
  const version = reply === null ? 0 : Number(reply);
  return Number.isSafeInteger(version) ? version : -1;
}
