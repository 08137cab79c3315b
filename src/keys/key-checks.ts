/**
 * The checks a key passes before it is used, beyond its kind and size: its members are
 * canonical base64url, its material is not degenerate, and its private and public halves
 * belong together. Run at import (loadKeys, importKeys, every reload, each remote JWK Set),
 * never per call. Messages name the member and the problem, never the material.
 */
import { Buffer } from 'node:buffer';
import type { KeyObject } from 'node:crypto';
import type { AlgorithmSpec } from '../algorithms/index.js';
import { JwtGrpcError } from '../base/errors.js';

/**
 * Why a key was refused, as `jwt_grpc_remote_jwks_rejected_keys_total` labels it:
 * `weak` (degenerate material: an RSA exponent below 65537 or even, a small-order Ed25519
 * point), `mismatch` (private and public halves that do not belong together), `encoding`
 * (a member that is not canonical base64url), `malformed` (not importable: no kid, a point
 * off its curve, a bad JWK), `unsupported` (an algorithm, type, size or use not served).
 */
export type KeyRefusalReason = 'weak' | 'mismatch' | 'encoding' | 'malformed' | 'unsupported';

/** Every {@link KeyRefusalReason}, in the order metrics list them. @internal */
export const KEY_REFUSAL_REASONS: readonly KeyRefusalReason[] = ['weak', 'mismatch', 'encoding', 'malformed', 'unsupported'];

/** A refused key: an ERR_INVALID_KEY whose reason the remote verifier counts. @internal */
export class KeyRefusedError extends JwtGrpcError {
  readonly reason: KeyRefusalReason;

  constructor(reason: KeyRefusalReason, message: string, options: { field: string; cause?: unknown }) {
    super('ERR_INVALID_KEY', message, options);
    this.reason = reason;
  }
}

/** The reason a key import failed: that of a {@link KeyRefusedError}, else `malformed`. @internal */
export function refusalReason(err: unknown): KeyRefusalReason {
  return err instanceof KeyRefusedError ? err.reason : 'malformed';
}

/**
 * How a refusal names its key: by its place in a key file and its kid (`keys[1] (kid "a")`),
 * or by its kid alone in a fetched set. The kid may be named here, unlike in the errors about
 * an entry's shape: these checks run on an entry that has every member a key needs, so its
 * kid is the name it would publish, not a secret pasted into the wrong member.
 */
function named(kid: string, place: string | undefined): string {
  return place === undefined ? `key "${kid}"` : `${place} (kid "${kid}")`;
}

/** JWK members holding base64url ([RFC 7518 §6](https://www.rfc-editor.org/rfc/rfc7518#section-6)): key material, public or private. */
const BASE64URL_MEMBERS = ['k', 'x', 'y', 'n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi'] as const;

/** RSA members that are integers ("Base64urlUInt"): the minimum number of octets, no leading zero. */
const RSA_INTEGER_MEMBERS: ReadonlySet<string> = new Set(['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi']);

/**
 * Why a JWK member is not canonical base64url, or undefined. Node's decoder skips
 * characters it does not know and takes `+`, `/`, `=` and trailing bits as they come, so
 * `k` with a space would give another secret than the file's: the text must be exactly what
 * decoding and re-encoding give back.
 */
function memberEncodingProblem(name: string, value: unknown, rsa: boolean): string | undefined {
  if (typeof value !== 'string') return `"${name}" must be a base64url string`;
  const bytes = Buffer.from(value, 'base64url');
  // Re-encoding writes only the base64url alphabet: equality also rules out every other character.
  if (bytes.toString('base64url') !== value) {
    return `"${name}" is not canonical base64url (no padding, "+", "/", whitespace or stray trailing bits)`;
  }
  if (rsa && RSA_INTEGER_MEMBERS.has(name) && bytes.length > 1 && bytes[0] === 0) return `"${name}" has a leading zero octet`;
  return undefined;
}

/** Refuses a JWK whose key members are not canonical base64url. @internal */
export function checkJwkEncoding(record: Readonly<Record<string, unknown>>, kid: string, place?: string): void {
  const rsa = record['kty'] === 'RSA';
  for (const name of BASE64URL_MEMBERS) {
    if (record[name] === undefined) continue;
    const problem = memberEncodingProblem(name, record[name], rsa);
    if (problem !== undefined) throw new KeyRefusedError('encoding', `${named(kid, place)}: ${problem}`, { field: kid });
  }
}

/** JWK members of a public key, compared with those derived from the private key. */
const PUBLIC_MEMBERS = ['crv', 'x', 'y', 'n', 'e'] as const;

/** How every refusal of halves that do not belong together begins, whichever check found it. */
const PAIR_MISMATCH = 'private key does not match its public key';

/** What a probe signs: any input will do, this one says what it is in a debugger. */
const PROBE_INPUT = Buffer.from('jwt-grpc.key-probe');

/**
 * Whether a private key and its public key belong together: the public members the JWK
 * carries equal those of the private key (OpenSSL derives an Ed25519 public key from the
 * seed and would otherwise ignore the file's `x`), and a probe signed with the private key
 * verifies with the public one (an EC `d` beside another key's `x`, `y`).
 */
function pairProblem(
  spec: AlgorithmSpec,
  signingKey: KeyObject,
  verificationKey: KeyObject,
  record: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  const mismatch = PAIR_MISMATCH;
  if (record !== undefined) {
    const derived: Readonly<Record<string, unknown>> = spec.publicJwk(verificationKey) ?? {};
    for (const name of PUBLIC_MEMBERS)
      if (record[name] !== undefined && record[name] !== derived[name]) return `${mismatch}: "${name}" differs`;
  }
  const problem = spec.checkPrivate(signingKey);
  if (problem !== undefined) return problem;
  try {
    return spec.prepareVerify(verificationKey)(PROBE_INPUT, spec.prepareSign(signingKey)(PROBE_INPUT))
      ? undefined
      : `${mismatch}: a probe it signed does not verify`;
  } catch {
    return `${mismatch}: it cannot sign a probe`;
  }
}

/**
 * The refusal of a private JWK that node:crypto would not import although its public members
 * alone import: the halves do not make one key. OpenSSL 3.5.9 and later refuse such a pair
 * while importing it, where earlier releases import it and leave the refusal to
 * {@link checkKeyMaterial}; either way the key is refused under its kid, as a mismatch.
 * `detail` is node:crypto's message, already stripped of the key's values. @internal
 */
export function pairRefusedAtImport(kid: string, alg: string, detail: string, place?: string): KeyRefusedError {
  return new KeyRefusedError('mismatch', `${named(kid, place)}: ${alg} ${PAIR_MISMATCH}: node:crypto refused the pair (${detail})`, {
    field: kid,
  });
}

/**
 * Refuses a key of the right kind whose material is degenerate or whose halves disagree.
 * `record` is the JWK the key came from (undefined for a PEM). @internal
 */
export function checkKeyMaterial(
  kid: string,
  alg: string,
  spec: AlgorithmSpec,
  keys: { signingKey: KeyObject | undefined; verificationKey: KeyObject },
  record: Readonly<Record<string, unknown>> | undefined,
  place?: string,
): void {
  const weak = spec.checkStrength(keys.verificationKey);
  if (weak !== undefined) throw new KeyRefusedError('weak', `${named(kid, place)}: ${alg} ${weak}`, { field: kid });
  if (keys.signingKey === undefined || spec.symmetric) return;
  const mismatch = pairProblem(spec, keys.signingKey, keys.verificationKey, record);
  if (mismatch !== undefined) throw new KeyRefusedError('mismatch', `${named(kid, place)}: ${alg} ${mismatch}`, { field: kid });
}
