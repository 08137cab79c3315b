/**
 * Key rotation in the phases a fleet needs, as edits of a key file's entries:
 *
 * 1. stage: a new key, verify-only (`key_ops: ["verify"]`). Every server that reloads
 *    publishes it in GetJwks, so replicas and remote verifiers know it before any token
 *    carries its kid.
 * 2. activate: the staged key signs; every other signer of its algorithm is deactivated
 *    (`key_ops: ["verify"]` and `deactivated_at`, the time it stopped signing).
 * 3. retire: a deactivated key leaves the file once every token it signed has expired:
 *    `deactivated_at` + the longest token lifetime + the clock tolerance.
 *
 * Each function returns the new entries and leaves its input as it was. @internal
 */
import { JwtGrpcError } from '../base/errors.js';
import type { KeyFileEntry } from './file.js';
import type { KeySet } from './key-set.js';

const VERIFY_ONLY = ['verify'];

function rotationError(message: string, field?: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_KEY', message, field === undefined ? {} : { field });
}

function find(entries: readonly KeyFileEntry[], kid: string): KeyFileEntry {
  const entry = entries.find((candidate) => candidate.kid === kid);
  if (entry === undefined) throw rotationError(`no key with kid ${JSON.stringify(kid)} in the key file`, kid);
  return entry;
}

/** [RFC 3339](https://www.rfc-editor.org/rfc/rfc3339) UTC to the second, as `deactivated_at` is written. */
export function rfc3339(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Adds `jwk` (a new private key) first, verify-only until activated. */
export function stageKey(entries: readonly KeyFileEntry[], jwk: KeyFileEntry): KeyFileEntry[] {
  return [{ ...jwk, key_ops: VERIFY_ONLY }, ...entries];
}

/** Adds `jwk` (a new private key) first, signing at once: stage and activate in one step, for a single server. */
export function addActiveKey(entries: readonly KeyFileEntry[], jwk: KeyFileEntry, current: KeySet, nowSeconds: number): KeyFileEntry[] {
  return activateKey([jwk, ...entries], jwk.kid, current, nowSeconds);
}

/**
 * Makes `kid` the signer of its algorithm (no `key_ops`, no `deactivated_at`) and
 * deactivates every other key of that algorithm that could sign in `current`.
 */
export function activateKey(entries: readonly KeyFileEntry[], kid: string, current: KeySet, nowSeconds: number): KeyFileEntry[] {
  const target = find(entries, kid);
  const signers = new Set(current.keys.filter((key) => key.canSign && key.alg === target.alg && key.kid !== kid).map((key) => key.kid));
  return entries.map((entry) => {
    if (entry === target) {
      const { key_ops: _ops, deactivated_at: _at, ...signing } = entry;
      return signing as KeyFileEntry;
    }
    return signers.has(entry.kid) ? { ...entry, key_ops: VERIFY_ONLY, deactivated_at: rfc3339(nowSeconds) } : entry;
  });
}

/**
 * Removes `kid`, refused while tokens it signed may still be valid: when it is the
 * active signer, when its `deactivated_at` + `waitSeconds` is still ahead, or when it has
 * no `deactivated_at` (nothing says when it last signed). `force` skips the time checks,
 * never the first.
 */
export function retireKey(
  entries: readonly KeyFileEntry[],
  kid: string,
  current: KeySet,
  options: { nowSeconds: number; waitSeconds: number; force: boolean },
): KeyFileEntry[] {
  find(entries, kid);
  const info = current.keys.find((key) => key.kid === kid);
  if (info?.active === true) {
    throw rotationError(`key ${kid} is the active ${info.alg} signer: activate another ${info.alg} key first`, kid);
  }
  if (!options.force) {
    if (info?.deactivatedAt === undefined) {
      throw rotationError(
        `key ${kid} has no deactivated_at, so nothing tells when it last signed; ` +
          'retire it with --force once every token it may have signed has expired',
        kid,
      );
    }
    const validUntil = info.deactivatedAt + options.waitSeconds;
    if (options.nowSeconds < validUntil) {
      throw rotationError(
        `key ${kid} stopped signing at ${rfc3339(info.deactivatedAt)}; tokens it signed may be valid until ${rfc3339(validUntil)} ` +
          `(--max-ttl plus the clock tolerance, ${options.waitSeconds} s): retire it after that, or now with --force`,
        kid,
      );
    }
  }
  return entries.filter((entry) => entry.kid !== kid);
}
