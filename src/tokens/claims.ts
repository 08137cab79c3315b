import { JwtGrpcError, invalidOption } from '../base/errors.js';
import { nearestName } from '../base/nearest-name.js';
import { firstUnknownName } from '../base/unknown-name.js';
import { type JwtPayload, type VerifyFailure, failure } from './result.js';

/**
 * The audience that accepts a token for any audience (or none): give it as `audience` where
 * a verifier or {@link jwtAuthInterceptor} requires one, to say on purpose that this service
 * does not check `aud`. Omitting `audience` there is an error, never this: a token minted for
 * another service would otherwise pass (go-oidc's `SkipClientIDCheck` is the same switch).
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const verifier = createVerifier(keys, { audience: ANY_AUDIENCE }); // aud not checked, on purpose
 * ```
 */
export const ANY_AUDIENCE: unique symbol = Symbol('jwt-grpc.ANY_AUDIENCE');

/**
 * The type of {@link ANY_AUDIENCE}.
 *
 * @example
 * ```ts
 * const audience: string | AnyAudience = process.env['AUDIENCE'] ?? ANY_AUDIENCE;
 * ```
 */
export type AnyAudience = typeof ANY_AUDIENCE;

/**
 * What a caller may require of a token beyond its signature and lifetime. A field left out
 * (or an empty string) keeps the verifier's own expectation.
 *
 * @example
 * ```ts
 * // hidden: declare const verifier: Verifier;
 * // hidden: declare const token: string;
 * const expect: ClaimExpectations = { audience: 'api', issuer: 'https://auth.example' };
 * const result = verifier.verify(token, expect);
 * ```
 */
export interface ClaimExpectations {
  /** The token's `aud` (a string or an array) must contain this; {@link ANY_AUDIENCE}: not checked. */
  readonly audience?: string | AnyAudience;
  /** The token's `iss` must equal this. */
  readonly issuer?: string;
}

/**
 * Expectations resolved: what `checkClaims` compares, undefined meaning "not checked".
 * @internal
 */
export interface CheckedExpectations {
  readonly audience: string | undefined;
  readonly issuer: string | undefined;
}

/** Nothing checked: the expectations of the service's own VerifyJwt, whose request names them. @internal */
export const NO_EXPECTATIONS: CheckedExpectations = Object.freeze({ audience: undefined, issuer: undefined });

/**
 * A call's expectations over a verifier's own: a field the call names wins, one it leaves
 * out (or empty, as proto3 leaves it) keeps the verifier's. No object is made when the call
 * changes nothing, so the common call costs two comparisons. @internal
 */
export function expectationsFor(expect: ClaimExpectations | undefined, own: CheckedExpectations): CheckedExpectations {
  if (expect === undefined) return own;
  refuseUnknownExpectation(expect);
  const asked = expect.audience;
  const audience = asked === undefined || asked === '' ? own.audience : asked === ANY_AUDIENCE ? undefined : asked;
  const issuer = expect.issuer === undefined || expect.issuer === '' ? own.issuer : expect.issuer;
  return audience === own.audience && issuer === own.issuer ? own : { audience, issuer };
}

/** The names a call's expectations may hold. */
const EXPECTATION_NAMES: readonly string[] = Object.freeze(['audience', 'issuer']);

/**
 * A call's expectations name only `audience` and `issuer`: a misspelt `audiance` would
 * otherwise leave the verifier's own audience in force without a word. Read as the
 * factories' options are (src/base/unknown-name.ts): inherited, getter and non-enumerable names
 * count, since `expect.audience` reads them all.
 */
function refuseUnknownExpectation(expect: ClaimExpectations): void {
  if (typeof expect !== 'object' || expect === null)
    throw invalidOption('expect', `must be an object naming audience and/or issuer, got ${expect === null ? 'null' : typeof expect}`);
  const name = firstUnknownName(expect, EXPECTATION_NAMES);
  if (name !== undefined) throw unknownExpectation(name);
}

function unknownExpectation(name: string): JwtGrpcError {
  const nearest = nearestName(name, EXPECTATION_NAMES);
  const hint = nearest === undefined ? 'a call names only audience and issuer' : `did you mean expect.${nearest}?`;
  return new JwtGrpcError('ERR_INVALID_OPTION', `option expect.${name}: is not an expectation; ${hint}`, { field: `expect.${name}` });
}

/** What an `audience` option left out is told: both ways to give one. @internal */
export const AUDIENCE_REQUIRED =
  "is required: give audience: 'my-service' (the aud this service's tokens carry), or audience: ANY_AUDIENCE to accept tokens for any audience";

/**
 * An `audience` option: a non-empty string or {@link ANY_AUDIENCE}. Left out, it is an
 * error where `required` (naming both choices), else undefined (another layer decides).
 * @internal
 */
export function audienceOption(value: unknown, required: boolean): string | AnyAudience | undefined {
  if (value === undefined) {
    if (required) throw invalidOption('audience', AUDIENCE_REQUIRED);
    return undefined;
  }
  if (value === ANY_AUDIENCE || (typeof value === 'string' && value.length > 0)) return value;
  const shown = typeof value === 'symbol' ? value.toString() : JSON.stringify(value);
  throw invalidOption('audience', `must be a non-empty string or ANY_AUDIENCE, got ${shown}`);
}

/** A validated `audience` as `checkClaims` reads it: undefined for ANY_AUDIENCE. @internal */
export function checkedAudience(audience: string | AnyAudience): string | undefined {
  return audience === ANY_AUDIENCE ? undefined : audience;
}

/** A number of seconds, or absent. */
const isNumericDate = (value: unknown): boolean => value === undefined || (typeof value === 'number' && Number.isFinite(value));

/** A string, or absent. */
const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';

/**
 * Checks claim types once, when a token is first verified: numbers are numbers
 * (not "123"), sub/iss are strings, aud a string or array of strings, exp present.
 * Each claim is read by its literal name, not through a loop over names: a keyed read
 * with a changing key is a megamorphic lookup, and this runs for every token signed.
 */
export function checkClaimTypes(payload: Record<string, unknown>): VerifyFailure | undefined {
  const exp = payload['exp'];
  if (!isNumericDate(exp)) return failure('MALFORMED', 'claim exp must be a number of seconds');
  if (!isNumericDate(payload['nbf'])) return failure('MALFORMED', 'claim nbf must be a number of seconds');
  if (!isNumericDate(payload['iat'])) return failure('MALFORMED', 'claim iat must be a number of seconds');
  if (exp === undefined) return failure('MALFORMED', 'claim exp is missing: tokens without expiry are refused');
  if (!isOptionalString(payload['sub'])) return failure('MALFORMED', 'claim sub must be a string');
  if (!isOptionalString(payload['iss'])) return failure('MALFORMED', 'claim iss must be a string');
  const aud = payload['aud'];
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((a) => typeof a === 'string'))) {
    return failure('MALFORMED', 'claim aud must be a string or an array of strings');
  }
  return undefined;
}

/**
 * The checks that depend on the moment and on the caller: run on every verification,
 * cached or not, so a cached token is never served past its `exp`.
 */
export function checkClaims(
  payload: JwtPayload,
  nowSeconds: number,
  toleranceSeconds: number,
  expect: CheckedExpectations,
): VerifyFailure | undefined {
  if (payload.exp <= nowSeconds - toleranceSeconds) return failure('EXPIRED', 'token has expired (exp)');
  if (payload.nbf !== undefined && payload.nbf > nowSeconds + toleranceSeconds) {
    return failure('NOT_YET_VALID', 'token is not valid yet (nbf)');
  }
  if (payload.iat !== undefined && payload.iat > nowSeconds + toleranceSeconds) {
    return failure('NOT_YET_VALID', 'token was issued in the future (iat)');
  }
  if (expect.audience !== undefined) {
    const aud = payload.aud;
    const matches = typeof aud === 'string' ? aud === expect.audience : aud?.includes(expect.audience);
    if (!matches) {
      const message =
        aud === undefined ? 'token has no aud claim, and an audience is expected' : 'token aud does not contain the expected audience';
      return failure('AUDIENCE_MISMATCH', message);
    }
  }
  if (expect.issuer !== undefined && payload.iss !== expect.issuer) {
    return failure('ISSUER_MISMATCH', 'token iss is not the expected issuer');
  }
  return undefined;
}
