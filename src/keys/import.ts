import { Buffer } from 'node:buffer';
import { type JsonWebKey, type KeyObject, createPrivateKey, createPublicKey, createSecretKey } from 'node:crypto';
import { ALGORITHM_SPECS, ALGORITHMS, isAlgorithm } from '../algorithms/index.js';
import { JwtGrpcError } from '../base/errors.js';
import { type KeyRefusalReason, KeyRefusedError, checkJwkEncoding, checkKeyMaterial, pairRefusedAtImport } from './key-checks.js';
import { type KeyEntry, KeySet, MAX_KID_LENGTH } from './key-set.js';
import { refuseUnknownOptions } from '../base/known-options.js';
import { KeyHandle, keyBackend, keyBackendMembers } from './backend.js';
import { registerBuiltinBackends } from './backends/index.js';

/**
 * The members a key entry may hold: the parameters of the IANA "JSON Web Key Parameters"
 * registry (RFC 7517, 7518, 8037, RFC 9864's AKP, OpenID Federation's iat/nbf/exp/revoked),
 * WebCrypto's `ext`, and jwt-grpc's own `pem` and `deactivated_at`. A key file is the
 * signer's configuration, not a set fetched from elsewhere: a misspelt `deactivated_at`
 * would leave a retired key signing, so an unknown member is refused.
 */
export const KEY_MEMBERS: readonly string[] = [
  ...['kty', 'use', 'key_ops', 'alg', 'kid', 'x5u', 'x5c', 'x5t', 'x5t#S256'],
  ...['crv', 'x', 'y', 'd', 'n', 'e', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'pub', 'priv'],
  ...['ext', 'iat', 'nbf', 'exp', 'revoked'],
  ...['pem', 'deactivated_at'],
  // A key that is a handle: an RFC 7512 PKCS#11 URI, or an AWS KMS key id, ARN or alias (docs/keys.md).
  ...['pkcs11', 'kms'],
];

/** The members of a JWK Set jwt-grpc reads. */
const KEY_SET_MEMBERS = ['keys'];

/**
 * One entry of a key file: a JWK (private for asymmetric keys that sign, public for
 * verify-only keys, `oct` for HMAC), or a PEM given inline. Both carry `kid` and `alg`.
 *
 * @example
 * ```ts
 * // hidden: declare const secretBase64url: string;
 * // hidden: declare const privateKeyPem: string;
 * const entries: KeyInput[] = [
 *   { kty: 'oct', k: secretBase64url, kid: 'hs-2026', alg: 'HS256' },
 *   { kid: 'rs-2026', alg: 'RS256', pem: privateKeyPem },
 * ];
 * const keys = importKeys({ keys: entries });
 * ```
 */
export type KeyInput = (Record<string, unknown> & { kid: string; alg: string }) | { kid: string; alg: string; pem: string };

/**
 * An error about `keys[index]`: it names the entry by its place in the key file, never by its
 * kid or any other value read from it, since a secret pasted into the wrong member would be
 * repeated to whoever reads the log.
 */
function keyError(index: number, reason: KeyRefusalReason, message: string, cause?: unknown, member?: string): JwtGrpcError {
  const at = member === undefined ? `keys[${index}]` : `keys[${index}].${member}`;
  return new KeyRefusedError(reason, `${at}: ${message}`, { field: at, cause });
}

/** The JWK key types, as node:crypto imports them. */
const KEY_TYPES = ['EC', 'RSA', 'OKP', 'oct'];

/** Values shorter than this are left in node:crypto's messages: no secret is that short, and "EC" or "RSA" read better as themselves. */
const MIN_QUOTED = 8;

/**
 * node:crypto's message with every string member of `record` cut out: some of its messages
 * quote a member (`X is not a supported JWK key type`), which may be a secret pasted there.
 */
function withoutValues(message: string, record: Readonly<Record<string, unknown>>): string {
  let text = message;
  for (const [member, value] of Object.entries(record)) {
    if (typeof value === 'string' && value.length >= MIN_QUOTED) text = text.split(value).join(`(the value of ${member})`);
  }
  return text;
}

function importOne(input: unknown, index: number): KeyEntry {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new KeyRefusedError('malformed', `keys[${index}] is not an object`, { field: `keys[${index}]` });
  }
  const record = input as Record<string, unknown>;
  const kid = record['kid'];
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) {
    throw new KeyRefusedError('malformed', `keys[${index}] needs a kid of 1 to ${MAX_KID_LENGTH} characters`, {
      field: `keys[${index}].kid`,
    });
  }
  refuseUnknownOptions(record, keyMembers(), { path: `keys[${index}]`, code: 'ERR_INVALID_KEY', noun: 'a JWK member' });
  const alg = record['alg'];
  if (!isAlgorithm(alg)) throw keyError(index, 'unsupported', `is not one of ${ALGORITHMS.join(', ')}`, undefined, 'alg');
  const spec = ALGORITHM_SPECS[alg];
  const deactivatedAt = readDeactivatedAt(index, record['deactivated_at']);
  const keyOps = record['key_ops'];
  // A deactivated key stopped signing when the key file says so, whatever else it carries.
  const signAllowed = (!Array.isArray(keyOps) || keyOps.includes('sign')) && deactivatedAt === undefined;

  const handleMember = keyBackendMembers().find((member) => record[member] !== undefined);
  if (handleMember !== undefined) return importHandle(record, index, handleMember, { kid, alg, spec, signAllowed, deactivatedAt });
  const isPem = typeof record['pem'] === 'string';
  if (!isPem) checkJwkEncoding(record, kid, `keys[${index}]`);
  let signingKey: KeyObject | undefined;
  let verificationKey: KeyObject;
  try {
    if (isPem) {
      const pem = record['pem'] as string;
      const isPrivate = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/.test(pem);
      signingKey = isPrivate ? createPrivateKey(pem) : undefined;
      verificationKey = signingKey === undefined ? createPublicKey(pem) : createPublicKey(signingKey);
    } else if (record['kty'] === 'oct') {
      if (typeof record['k'] !== 'string') throw keyError(index, 'malformed', 'oct key has no "k"');
      signingKey = createSecretKey(Buffer.from(record['k'], 'base64url'));
      verificationKey = signingKey;
    } else {
      if (!KEY_TYPES.includes(record['kty'] as string))
        throw keyError(index, 'unsupported', `is not one of ${KEY_TYPES.join(', ')} (or give "pem")`, undefined, 'kty');
      // node:crypto ignores members it does not know (kid, alg, use, key_ops).
      const jwk = record as JsonWebKey;
      signingKey = typeof record['d'] === 'string' ? importPrivateJwk(jwk, kid, alg, index) : undefined;
      verificationKey = signingKey === undefined ? createPublicKey({ key: jwk, format: 'jwk' }) : createPublicKey(signingKey);
    }
  } catch (err) {
    if (err instanceof JwtGrpcError) throw err;
    throw keyError(index, 'malformed', `cannot import: ${withoutValues((err as Error).message, record)}`, err);
  }
  const problem = spec.checkKey(signingKey ?? verificationKey);
  if (problem !== undefined) throw keyError(index, 'unsupported', `${alg} ${problem}`);
  checkKeyMaterial(kid, alg, spec, { signingKey, verificationKey }, isPem ? undefined : record, `keys[${index}]`);
  return { kid, alg, spec, signingKey: signAllowed ? signingKey : undefined, verificationKey, deactivatedAt };
}

/**
 * A private JWK as node:crypto imports it. Where it refuses the whole key but takes the public
 * members alone, the private half is what it refused: that is a pair that does not belong
 * together, named by kid like the project's own pair check.
 */
function importPrivateJwk(jwk: JsonWebKey, kid: string, alg: string, index: number): KeyObject {
  try {
    return createPrivateKey({ key: jwk, format: 'jwk' });
  } catch (err) {
    const { kty, crv, x, y, n, e } = jwk;
    try {
      createPublicKey({ key: { kty, crv, x, y, n, e } as JsonWebKey, format: 'jwk' });
    } catch {
      throw err;
    }
    throw pairRefusedAtImport(kid, alg, withoutValues((err as Error).message, jwk as Record<string, unknown>), `keys[${index}]`);
  }
}

/** The members a key file entry may hold: {@link KEY_MEMBERS} and those of every registered key backend. @internal */
export function keyMembers(): string[] {
  registerBuiltinBackends();
  return [...new Set([...KEY_MEMBERS, ...keyBackendMembers()])];
}

/** Members a handle entry may not carry: the private key stays in the backend, so none is in the file. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv', 'pem'];

/** Algorithms a handle may sign with: those that PKCS#11 and AWS KMS both have. */
const HANDLE_ALGORITHMS = ['ES256', 'ES384', 'RS256', 'PS256'];

/**
 * A key file entry that names a handle: its public members (cached, so verification and
 * GetJwks work without the backend) and a reference the backend opens when it first signs.
 */
function importHandle(
  record: Readonly<Record<string, unknown>>,
  index: number,
  member: string,
  key: { kid: string; alg: (typeof ALGORITHMS)[number]; spec: KeyEntry['spec']; signAllowed: boolean; deactivatedAt: number | undefined },
): KeyEntry {
  const ref = record[member];
  if (typeof ref !== 'string' || ref.length === 0) throw keyError(index, 'malformed', 'must be a non-empty string', undefined, member);
  const other = keyBackendMembers().find((name) => name !== member && record[name] !== undefined);
  if (other !== undefined) throw keyError(index, 'malformed', `names a handle in both "${member}" and "${other}"`, undefined, other);
  const secret = PRIVATE_MEMBERS.find((name) => record[name] !== undefined);
  if (secret !== undefined)
    throw keyError(index, 'malformed', `a key held by ${member} has no private member in the key file`, undefined, secret);
  if (!HANDLE_ALGORITHMS.includes(key.alg))
    throw keyError(index, 'unsupported', `a ${member} key signs ${HANDLE_ALGORITHMS.join(', ')}`, undefined, 'alg');
  checkJwkEncoding(record, key.kid, `keys[${index}]`);
  let verificationKey: KeyObject;
  try {
    verificationKey = createPublicKey({ key: record as JsonWebKey, format: 'jwk' });
  } catch (err) {
    throw keyError(
      index,
      'malformed',
      `needs the public key's members (kty, crv, x, y or n, e): ${withoutValues((err as Error).message, record)}`,
      err,
    );
  }
  const problem = key.spec.checkKey(verificationKey);
  if (problem !== undefined) throw keyError(index, 'unsupported', `${key.alg} ${problem}`);
  checkKeyMaterial(key.kid, key.alg, key.spec, { signingKey: undefined, verificationKey }, record, `keys[${index}]`);
  const backend = keyBackend(member);
  if (backend === undefined) throw keyError(index, 'unsupported', 'names no registered key backend', undefined, member);
  const publicJwk = verificationKey.export({ format: 'jwk' });
  return {
    kid: key.kid,
    alg: key.alg,
    spec: key.spec,
    signingKey: undefined,
    verificationKey,
    deactivatedAt: key.deactivatedAt,
    reference: { member, ref },
    handle: key.signAllowed ? new KeyHandle(backend, ref, key.kid, key.alg, publicJwk) : undefined,
  };
}

/** [RFC 3339](https://www.rfc-editor.org/rfc/rfc3339) in UTC, as `keys rotate` writes it: `2026-11-23T10:15:00Z` (fractions allowed). */
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

/** A key's `deactivated_at` member (when it stopped signing) in seconds since the epoch. */
function readDeactivatedAt(index: number, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' && RFC3339_UTC.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw keyError(index, 'malformed', 'must be an RFC 3339 UTC time such as "2026-11-23T10:15:00Z"', undefined, 'deactivated_at');
  return Math.floor(ms / 1000);
}

/**
 * Imports keys from a JWK Set (`{ keys: [...] }`), each entry a JWK or `{ kid, alg, pem }`.
 * Per algorithm the first key able to sign becomes the active signer; the others only
 * verify. A key signs only with its private part (or secret), a `key_ops` that includes
 * `"sign"` (when it has one) and no `deactivated_at` (the RFC 3339 time it stopped
 * signing, which `jwt-grpc keys rotate` writes). HMAC secrets shorter than the hash
 * output and RSA keys under 2048 bits are refused, and so is every degenerate key
 * (docs/keys.md, "What is refused"): an RSA exponent below 65537 or even, a small-order or
 * non-canonical Ed25519 point, private and public halves that do not match (each private
 * key signs a probe once, here), a member that is not canonical base64url. The
 * `ERR_INVALID_KEY` names the kid and the reason, never the material.
 *
 * @example
 * ```ts
 * // hidden: declare const secretBase64url: string;
 * const keys = importKeys({ keys: [{ kty: 'oct', k: secretBase64url, kid: 'hs-2026', alg: 'HS256' }] });
 * ```
 */
export function importKeys(jwks: unknown): KeySet {
  const list = typeof jwks === 'object' && jwks !== null ? (jwks as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list) || list.length === 0) {
    throw new JwtGrpcError('ERR_INVALID_KEY', 'expected a JWK Set: an object with a non-empty "keys" array', {
      field: 'keys',
    });
  }
  refuseUnknownOptions(jwks, KEY_SET_MEMBERS, { code: 'ERR_INVALID_KEY', noun: 'a JWK Set member' });
  return new KeySet(list.map(importOne));
}
