import { JwtGrpcError } from '../errors.js';
import { importKeys } from '../keys/import.js';
import type { KeyInfo, KeySet } from '../keys/key-set.js';

/** The members of a public JWK that verification needs; anything else (private members included) is dropped. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg'] as const;

/** A JWK Set as fetched: the keys that can verify, and why the others were left out. */
export interface ParsedJwks {
  /** Undefined when no key in the set can verify (an issuer with HMAC keys only publishes none). */
  readonly keySet: KeySet | undefined;
  readonly keys: readonly KeyInfo[];
  readonly skipped: readonly string[];
}

function publicMembers(jwk: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of PUBLIC_MEMBERS) if (jwk[name] !== undefined) out[name] = jwk[name];
  return out;
}

/** Why `jwk` cannot verify here, or undefined when it can. */
function unusable(jwk: unknown): string | undefined {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'not an object';
  const record = jwk as Record<string, unknown>;
  // A secret in a published set is no secret: whoever reads the set could sign.
  if (record['kty'] === 'oct') return 'secret (oct) keys are never taken from a JWK Set';
  if (record['use'] !== undefined && record['use'] !== 'sig') return `use ${JSON.stringify(record['use'])} is not "sig"`;
  try {
    importKeys({ keys: [publicMembers(record)] });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Parses a JWK Set served by GetJwks into verify-only keys. Keys this package cannot use
 * (unknown `alg`, short RSA modulus, `oct`, `use` other than `sig`) are left out and
 * listed in `skipped`, so one odd key does not take the others down; a set that is not
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
  const usable: Record<string, unknown>[] = [];
  const skipped: string[] = [];
  for (const [index, jwk] of list.entries()) {
    const problem = unusable(jwk);
    if (problem === undefined) usable.push(publicMembers(jwk as Record<string, unknown>));
    else skipped.push(`keys[${index}]: ${problem}`);
  }
  const keySet = usable.length === 0 ? undefined : importKeys({ keys: usable });
  return { keySet, keys: keySet?.keys ?? [], skipped };
}
