import { JwtGrpcError } from '../base/errors.js';
import { importKeys } from '../keys/import.js';
import { type KeyRefusalReason, refusalReason } from '../keys/key-checks.js';
import { type KeyEntry, type KeyInfo, KeySet, MAX_KID_LENGTH } from '../keys/key-set.js';

/** The members of a public JWK that verification needs; anything else (private members included) is dropped. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg'] as const;

/** A key of a fetched set left out: its kid (or `keys[i]` without one), the reason label and the problem. */
export interface RefusedJwk {
  readonly kid: string;
  readonly reason: KeyRefusalReason;
  readonly problem: string;
}

/** A JWK Set as fetched: the keys that can verify, and why the others were left out. */
export interface ParsedJwks {
  /** Undefined when no key in the set can verify (an issuer with HMAC keys only publishes none). */
  readonly keySet: KeySet | undefined;
  readonly keys: readonly KeyInfo[];
  readonly refused: readonly RefusedJwk[];
}

function publicMembers(jwk: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of PUBLIC_MEMBERS) if (jwk[name] !== undefined) out[name] = jwk[name];
  return out;
}

/**
 * `jwk` imported as a verify-only key, or why it cannot verify here. The import runs every
 * check a key file's keys pass (canonical base64url, no degenerate RSA exponent or Ed25519 point).
 */
function importJwk(jwk: unknown): KeyEntry | Omit<RefusedJwk, 'kid'> {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return { reason: 'malformed', problem: 'not an object' };
  const record = jwk as Record<string, unknown>;
  // A secret in a published set is no secret: whoever reads the set could sign.
  if (record['kty'] === 'oct') return { reason: 'unsupported', problem: 'secret (oct) keys are never taken from a JWK Set' };
  if (record['use'] !== undefined && record['use'] !== 'sig')
    return { reason: 'unsupported', problem: `use ${JSON.stringify(record['use'])} is not "sig"` };
  try {
    return importKeys({ keys: [publicMembers(record)] })
      .entries()
      .next().value as KeyEntry;
  } catch (err) {
    // Imported alone, the key is `keys[0]` of a set of one: its place in the fetched set is the log line's, not this.
    return { reason: refusalReason(err), problem: (err as Error).message.replace(/^keys\[0\]/, 'key') };
  }
}

/** The kid a log line names for a refused key: its own when it has a usable one, else its place in the set. */
function kidOf(jwk: unknown, index: number): string {
  const kid = (jwk as { kid?: unknown } | null)?.kid;
  return typeof kid === 'string' && kid.length > 0 && kid.length <= MAX_KID_LENGTH ? kid : `keys[${index}]`;
}

/**
 * Parses a JWK Set served by GetJwks into verify-only keys. Keys this package cannot use
 * (unknown `alg`, short RSA modulus, `oct`, `use` other than `sig`) or refuses (degenerate,
 * non-canonical) are left out and listed in `refused`, so one bad key does not take the
 * others down; a set that is not
 * JSON, has no `keys` array or repeats a kid is refused as a whole (`ERR_INVALID_KEY`).
 */
export function parseJwks(json: string, issuer: string): ParsedJwks {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new JwtGrpcError('ERR_INVALID_KEY', `issuer ${issuer} served a JWK Set that is not JSON`);
  }
  const list = typeof parsed === 'object' && parsed !== null ? (parsed as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list)) throw new JwtGrpcError('ERR_INVALID_KEY', `issuer ${issuer} served a JWK Set without a "keys" array`);
  const usable: KeyEntry[] = [];
  const refused: RefusedJwk[] = [];
  for (const [index, jwk] of list.entries()) {
    const imported = importJwk(jwk);
    if ('reason' in imported) refused.push({ kid: kidOf(jwk, index), ...imported });
    else usable.push(imported);
  }
  // A repeated kid refuses the whole set (KeySet's own check): which of the two would verify?
  const keySet = usable.length === 0 ? undefined : new KeySet(usable);
  return { keySet, keys: keySet?.keys ?? [], refused };
}
