import { type JwtPayload, type VerifyFailure, failure } from './result.js';

/**
 * What a caller may require of a token beyond its signature and lifetime.
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
  /** The token's `aud` (a string or an array) must contain this. */
  readonly audience?: string;
  /** The token's `iss` must equal this. */
  readonly issuer?: string;
}

const NUMERIC_CLAIMS = ['exp', 'nbf', 'iat'] as const;

/**
 * Checks claim types once, when a token is first verified: numbers are numbers
 * (not "123"), sub/iss are strings, aud a string or array of strings, exp present.
 */
export function checkClaimTypes(payload: Record<string, unknown>): VerifyFailure | undefined {
  for (const claim of NUMERIC_CLAIMS) {
    const value = payload[claim];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
      return failure('MALFORMED', `claim ${claim} must be a number of seconds`);
    }
  }
  if (payload['exp'] === undefined) return failure('MALFORMED', 'claim exp is missing: tokens without expiry are refused');
  for (const claim of ['sub', 'iss'] as const) {
    if (payload[claim] !== undefined && typeof payload[claim] !== 'string') {
      return failure('MALFORMED', `claim ${claim} must be a string`);
    }
  }
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
  expect: ClaimExpectations | undefined,
): VerifyFailure | undefined {
  if (payload.exp <= nowSeconds - toleranceSeconds) return failure('EXPIRED', 'token has expired (exp)');
  if (payload.nbf !== undefined && payload.nbf > nowSeconds + toleranceSeconds) {
    return failure('NOT_YET_VALID', 'token is not valid yet (nbf)');
  }
  if (payload.iat !== undefined && payload.iat > nowSeconds + toleranceSeconds) {
    return failure('NOT_YET_VALID', 'token was issued in the future (iat)');
  }
  if (expect === undefined) return undefined;
  if (expect.audience) {
    const aud = payload.aud;
    const matches = typeof aud === 'string' ? aud === expect.audience : aud !== undefined && aud.includes(expect.audience);
    if (!matches) {
      const message = aud === undefined ? 'token has no aud claim, and an audience is expected' : 'token aud does not contain the expected audience';
      return failure('AUDIENCE_MISMATCH', message);
    }
  }
  if (expect.issuer && payload.iss !== expect.issuer) {
    return failure('ISSUER_MISMATCH', 'token iss is not the expected issuer');
  }
  return undefined;
}
