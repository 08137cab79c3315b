import type { Algorithm } from '../algorithms/names.js';

/**
 * Why a token failed verification; mirrors `VerifyJwtResponse.Reason` in the proto.
 *
 * @example
 * ```ts
 * // hidden: declare const verifier: Verifier;
 * // hidden: declare const token: string;
 * const result = verifier.verify(token);
 * if (!result.valid) {
 *   const reason: VerifyFailureReason = result.reason;
 *   if (reason === 'EXPIRED') console.log('ask the client to sign in again');
 * }
 * ```
 */
export type VerifyFailureReason =
  | 'MALFORMED'
  | 'BAD_SIGNATURE'
  | 'ALGORITHM_NOT_ALLOWED'
  | 'UNKNOWN_KEY'
  | 'EXPIRED'
  | 'NOT_YET_VALID'
  | 'AUDIENCE_MISMATCH'
  | 'ISSUER_MISMATCH'
  | 'UNSUPPORTED_HEADER'
  /**
   * The token verifies but is revoked: the server's VerifyJwt found its `jti` revoked
   * (RevokeJwt), or a remote verifier found its entry set in the Token Status List its
   * `status` claim names (docs/status-list.md). A local {@link Verifier} has neither and
   * never answers it.
   */
  | 'REVOKED';

/**
 * The registered claims jwt-grpc checks, plus whatever else the token carries.
 *
 * @example
 * ```ts
 * // hidden: declare const result: VerifyResult;
 * if (result.valid) {
 *   const payload: JwtPayload = result.payload;
 *   console.log(payload.sub, new Date(payload.exp * 1000), payload['role']);
 * }
 * ```
 */
export interface JwtPayload {
  readonly sub?: string;
  readonly iss?: string;
  readonly aud?: string | readonly string[];
  readonly exp: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly [claim: string]: unknown;
}

/**
 * A token that passed every check, with the key that verified it.
 *
 * @example
 * ```ts
 * // hidden: declare const result: VerifyResult;
 * if (result.valid) {
 *   const verified: VerifiedToken = result;
 *   console.log(verified.kid, verified.alg, verified.payloadJson);
 * }
 * ```
 */
export interface VerifiedToken {
  readonly valid: true;
  readonly alg: Algorithm;
  readonly kid: string;
  /** Frozen (deeply, once cached): the verification cache shares it between calls. */
  readonly payload: JwtPayload;
  /** The payload exactly as the token carries it (JSON text). */
  readonly payloadJson: string;
}

/**
 * A token that failed: why, in a reason code and a message safe to log.
 *
 * @example
 * ```ts
 * // hidden: declare const result: VerifyResult;
 * if (!result.valid) {
 *   const failure: VerifyFailure = result;
 *   console.warn(failure.reason, failure.message); // e.g. 'BAD_SIGNATURE', 'signature does not verify'
 * }
 * ```
 */
export interface VerifyFailure {
  readonly valid: false;
  readonly reason: VerifyFailureReason;
  /** Says what is wrong; never contains the token or key material. */
  readonly message: string;
}

/**
 * A verification outcome: an invalid token is a value, not an exception.
 *
 * @example
 * ```ts
 * // hidden: declare const verifier: Verifier;
 * // hidden: declare const token: string;
 * const result: VerifyResult = verifier.verify(token, { audience: 'api' });
 * const sub = result.valid ? result.payload.sub : undefined;
 * ```
 */
export type VerifyResult = VerifiedToken | VerifyFailure;

/** @internal */
export function failure(reason: VerifyFailureReason, message: string): VerifyFailure {
  return { valid: false, reason, message };
}
