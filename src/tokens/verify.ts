import { Buffer } from 'node:buffer';
import { type Algorithm, type CheckSignature, isAlgorithm } from '../algorithms/index.js';
import { invalidOption } from '../base/errors.js';
import { optionValue } from '../options/resolve.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { type KeySet, MAX_KID_LENGTH } from '../keys/key-set.js';
import { VerificationCache } from './cache.js';
import {
  type AnyAudience,
  type CheckedExpectations,
  type ClaimExpectations,
  NO_EXPECTATIONS,
  audienceOption,
  checkClaimTypes,
  checkClaims,
  checkedAudience,
  expectationsFor,
} from './claims.js';
import { type JwtPayload, type VerifiedToken, type VerifyFailure, type VerifyResult, failure } from './result.js';

/**
 * Options of {@link createVerifier}; validated once, when the verifier is made, with the
 * same rules as the service options of the same names.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const options: VerifierOptions = { audience: 'api', clockToleranceSeconds: 2, cache: { maxEntries: 1000 } };
 * const verifier = createVerifier(keys, options);
 * ```
 */
export interface VerifierOptions {
  /**
   * Required: the `aud` every token must carry unless a `verify` call names another, or
   * {@link ANY_AUDIENCE} to accept tokens for any audience. Left out, `createVerifier`
   * throws (ERR_INVALID_OPTION): a token minted for another service would otherwise pass.
   */
  readonly audience: string | AnyAudience;
  /** The `iss` every token must carry unless a `verify` call names another. Default: not checked (keys alone do not name an issuer). */
  readonly issuer?: string;
  /** Leeway for exp, nbf and iat, an integer from 0 to 300 seconds. Default 5. */
  readonly clockToleranceSeconds?: number;
  /** Longest token accepted, 64 to 1048576 characters. Default 8192. */
  readonly maxTokenLength?: number;
  /** Bounded cache of verified tokens; `false` or `{ maxEntries: 0 }` turns it off. Default `{ maxEntries: 10000 }`. */
  readonly cache?: { readonly maxEntries: number } | false;
  /** The clock, in seconds since the epoch; for tests. Default `Date.now() / 1000`. */
  readonly clock?: () => number;
}

/**
 * Verifies compact JWS tokens against one KeySet; made once by {@link createVerifier}.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * // hidden: declare const token: string;
 * // hidden: declare const justSigned: string;
 * const verifier: Verifier = createVerifier(keys, { audience: 'api' });
 * const result = verifier.verify(token);            // cached when valid
 * const fresh = verifier.verifyUncached(justSigned); // a token seen once
 * ```
 */
export interface Verifier {
  /**
   * Verifies `token`; an invalid token is a `{ valid: false, reason }` value, never a throw.
   * `expect` overrides the verifier's own `audience` and `issuer` for this call.
   */
  verify(token: string, expect?: ClaimExpectations): VerifyResult;
  /** Like `verify` but neither reads nor fills the cache (for tokens seen once, e.g. just signed). */
  verifyUncached(token: string, expect?: ClaimExpectations): VerifyResult;
  /** Lookups of the cache by `verify` so far: tokens found verified already, and not; both 0 with the cache off. */
  cacheStats(): { readonly hits: number; readonly misses: number };
  /** The `audience` it was made with: what a call that names none must carry. */
  readonly audience: string | AnyAudience;
}

/** A verifier without an audience of its own: what {@link createKeyVerifier} makes. @internal */
export type KeyVerifier = Omit<Verifier, 'audience'>;

/** A header that passed every check, bound to the key that will verify the signature. */
interface ResolvedHeader {
  readonly alg: Algorithm;
  readonly kid: string;
  readonly check: CheckSignature;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Headers that point at keys outside our key set; we never fetch or trust them. */
const FOREIGN_KEY_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;
/** Distinct headers remembered; a key set has few kids, so real traffic fits easily. */
const HEADER_CACHE_ENTRIES = 1024;

function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describeKid(kid: string): string {
  return JSON.stringify(kid.length > 64 ? kid.slice(0, 64) + '...' : kid);
}

/** The names {@link VerifierOptions} holds; an object with another is refused. */
const VERIFIER_OPTION_NAMES = optionNames<VerifierOptions>({
  audience: true,
  issuer: true,
  clockToleranceSeconds: true,
  maxTokenLength: true,
  cache: true,
  clock: true,
});

/** The verifier's options through the option table: the same rules as the service's. */
function validateOptions(options: Omit<VerifierOptions, 'audience' | 'issuer'>): {
  clockToleranceSeconds: number;
  maxTokenLength: number;
  cacheEntries: number;
  clock: () => number;
} {
  if (options.clock !== undefined && typeof options.clock !== 'function') throw invalidOption('clock', 'must be a function');
  return {
    clockToleranceSeconds: optionValue('clockToleranceSeconds', options.clockToleranceSeconds),
    maxTokenLength: optionValue('maxTokenLength', options.maxTokenLength),
    cacheEntries: optionValue('verifyCache', options.cache, 'cache'),
    clock: options.clock ?? (() => Date.now() / 1000),
  };
}

/**
 * Prepares verification once per key (KeyObjects bound into closures, decoded headers
 * remembered) so the hot call decodes, checks one signature and the claims.
 *
 * Checks: compact form and strict base64url; header a JSON object with a known `alg`
 * (never `none`) equal to the `alg` of the key its `kid` names; no `crit`, `b64: false`
 * or foreign key headers (`jku`, `x5u`, `jwk`, `x5c`); signature; payload a JSON object
 * with numeric `exp` (required), `nbf`, `iat`; exp/nbf/iat against the clock with the
 * tolerance; `aud` (required: `options.audience`, or {@link ANY_AUDIENCE} on purpose) and
 * `iss` (when given).
 *
 * A local verifier has no revocation set: a token revoked at its server (RevokeJwt) still
 * verifies here until its `exp`. Only the server's VerifyJwt answers REVOKED (docs/revocation.md).
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * // hidden: declare const token: string;
 * const verifier = createVerifier(keys, { audience: 'api', clockToleranceSeconds: 2 });
 * const result = verifier.verify(token);
 * if (result.valid) console.log(result.payload.sub);
 * else console.log(result.reason, result.message);
 * ```
 */
export function createVerifier(keys: KeySet, options: VerifierOptions): Verifier {
  // Called without options from JavaScript: the error names the option it must have.
  const given: Partial<VerifierOptions> = options ?? {};
  refuseUnknownOptions(given, VERIFIER_OPTION_NAMES, { owner: 'createVerifier' });
  const audience = audienceOption(given.audience, true) as string | AnyAudience;
  const issuer = stringOrUndefined('issuer', given.issuer);
  const verifier = createKeyVerifier(keys, given, { audience: checkedAudience(audience), issuer });
  return { ...verifier, audience };
}

function stringOrUndefined(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0)
    throw invalidOption(name, `must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

/** What a token's header must not carry, or undefined when it passes (alg and kid are checked against the key after). */
function headerProblem(header: Record<string, unknown>): VerifyFailure | undefined {
  const alg = header['alg'];
  if (typeof alg !== 'string' || !isAlgorithm(alg))
    return failure('ALGORITHM_NOT_ALLOWED', `header alg ${JSON.stringify(alg)} is not allowed`);
  if (header['crit'] !== undefined) return failure('UNSUPPORTED_HEADER', 'header crit names extensions this verifier does not support');
  if (header['b64'] !== undefined && header['b64'] !== true)
    return failure('UNSUPPORTED_HEADER', 'header b64: unencoded payloads are not supported');
  for (const name of FOREIGN_KEY_HEADERS) {
    if (header[name] !== undefined) return failure('UNSUPPORTED_HEADER', `header ${name}: keys from token headers are never trusted`);
  }
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid.length === 0) return failure('UNKNOWN_KEY', 'header has no kid');
  if (kid.length > MAX_KID_LENGTH) return failure('UNKNOWN_KEY', `header kid is longer than ${MAX_KID_LENGTH} characters`);
  return undefined;
}

/**
 * Verification against one KeySet, prepared once per key (KeyObjects bound into closures,
 * decoded headers remembered) so the hot call decodes, checks one signature and the claims.
 * What {@link createKeyVerifier} wraps. @internal
 */
class KeySetVerifier {
  readonly #keys: KeySet;
  readonly #own: CheckedExpectations;
  readonly #clockToleranceSeconds: number;
  readonly #maxTokenLength: number;
  readonly #clock: () => number;
  /** The signature check of each kid, prepared once. */
  readonly #checks = new Map<string, CheckSignature>();
  /** Header segments seen, resolved to their key: a token's header is decoded once. */
  readonly #headers = new Map<string, ResolvedHeader>();
  readonly #cache: VerificationCache | undefined;

  constructor(keys: KeySet, options: Omit<VerifierOptions, 'audience' | 'issuer'>, own: CheckedExpectations) {
    const { clockToleranceSeconds, maxTokenLength, clock, cacheEntries } = validateOptions(options);
    this.#keys = keys;
    this.#own = own;
    this.#clockToleranceSeconds = clockToleranceSeconds;
    this.#maxTokenLength = maxTokenLength;
    this.#clock = clock;
    this.#cache = cacheEntries > 0 ? new VerificationCache(cacheEntries) : undefined;
    for (const entry of keys.entries()) this.#checks.set(entry.kid, entry.spec.prepareVerify(entry.verificationKey));
  }

  cacheStats(): { readonly hits: number; readonly misses: number } {
    return { hits: this.#cache?.hits ?? 0, misses: this.#cache?.misses ?? 0 };
  }

  verifyWith(useCache: boolean, token: string, expect?: ClaimExpectations): VerifyResult {
    if (typeof token !== 'string' || token.length === 0) return failure('MALFORMED', 'token is empty');
    if (token.length > this.#maxTokenLength) return failure('MALFORMED', `token is longer than ${this.#maxTokenLength} characters`);
    const cache = this.#cache;
    let verified = useCache ? cache?.get(token) : undefined;
    const hit = verified !== undefined;
    if (verified === undefined) {
      const result = this.#verifySignedParts(token);
      if (!result.valid) return result;
      verified = result;
    }
    const claimFailure = checkClaims(verified.payload, this.#clock(), this.#clockToleranceSeconds, expectationsFor(expect, this.#own));
    if (claimFailure !== undefined) {
      if (claimFailure.reason === 'EXPIRED') cache?.delete(token);
      return claimFailure;
    }
    // Only a token that passed every check is stored: inserting first would let each
    // failing one (a client retrying an expired token) evict a valid entry.
    if (useCache && !hit) cache?.set(token, verified);
    return verified;
  }

  /** The hot path of an uncached token: split, header (remembered), one signature, payload; no object made on the way. */
  #verifySignedParts(token: string): VerifiedToken | VerifyFailure {
    const firstDot = token.indexOf('.');
    const secondDot = token.indexOf('.', firstDot + 1);
    if (firstDot <= 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) !== -1)
      return failure('MALFORMED', 'token is not three dot-separated segments');
    const headerSegment = token.slice(0, firstDot);
    const payloadSegment = token.slice(firstDot + 1, secondDot);
    const signatureSegment = token.slice(secondDot + 1);
    if (!BASE64URL.test(headerSegment) || !BASE64URL.test(payloadSegment) || !BASE64URL.test(signatureSegment)) {
      return failure('MALFORMED', 'token segments must be unpadded base64url');
    }
    const header = this.#resolveHeader(headerSegment);
    if ('valid' in header) return header;
    if (!header.check(Buffer.from(token.slice(0, secondDot)), signatureSegment))
      return failure('BAD_SIGNATURE', 'signature does not verify');
    let payloadJson: string;
    let payload: unknown;
    try {
      payloadJson = Buffer.from(payloadSegment, 'base64url').toString('utf8');
      payload = JSON.parse(payloadJson);
    } catch {
      return failure('MALFORMED', 'payload is not base64url JSON');
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
      return failure('MALFORMED', 'payload is not a JSON object');
    const typeFailure = checkClaimTypes(payload as Record<string, unknown>);
    if (typeFailure !== undefined) return typeFailure;
    return { valid: true, alg: header.alg, kid: header.kid, payload: Object.freeze(payload as JwtPayload), payloadJson };
  }

  #resolveHeader(segment: string): ResolvedHeader | VerifyFailure {
    const known = this.#headers.get(segment);
    if (known !== undefined) return known;
    const header = decodeJsonObject(segment);
    if (header === undefined) return failure('MALFORMED', 'header is not a base64url JSON object');
    const problem = headerProblem(header);
    if (problem !== undefined) return problem;
    const alg = header['alg'] as Algorithm;
    const kid = header['kid'] as string;
    const entry = this.#keys.entry(kid);
    const check = this.#checks.get(kid);
    if (entry === undefined || check === undefined) return failure('UNKNOWN_KEY', `no key with kid ${describeKid(kid)}`);
    // The key decides the algorithm; a token may only name the one its key has.
    if (entry.alg !== alg) return failure('ALGORITHM_NOT_ALLOWED', `key ${describeKid(kid)} is for ${entry.alg}, not ${alg}`);
    const resolved: ResolvedHeader = { alg, kid, check };
    if (this.#headers.size >= HEADER_CACHE_ENTRIES) this.#headers.clear();
    this.#headers.set(segment, resolved);
    return resolved;
  }
}

/**
 * A verifier whose own expectations are `own`, made without asking for an audience: for
 * the service's VerifyJwt (whose request names its audience, {@link NO_EXPECTATIONS}) and
 * the remote verifier (which resolves expectations itself). @internal
 */
export function createKeyVerifier(
  keys: KeySet,
  options: Omit<VerifierOptions, 'audience' | 'issuer'>,
  own: CheckedExpectations = NO_EXPECTATIONS,
): KeyVerifier {
  const verifier = new KeySetVerifier(keys, options, own);
  // Plain functions: a verifier's methods work unbound, and spread into createVerifier's.
  return {
    verify: (token, expect) => verifier.verifyWith(true, token, expect),
    verifyUncached: (token, expect) => verifier.verifyWith(false, token, expect),
    cacheStats: () => verifier.cacheStats(),
  };
}
