import type { Algorithm } from '../algorithms.js';

/** Why a token failed verification; mirrors `VerifyJwtResponse.Reason` in the proto. */
export type VerifyFailureReason =
  | 'MALFORMED'
  | 'BAD_SIGNATURE'
  | 'ALGORITHM_NOT_ALLOWED'
  | 'UNKNOWN_KEY'
  | 'EXPIRED'
  | 'NOT_YET_VALID'
  | 'AUDIENCE_MISMATCH'
  | 'ISSUER_MISMATCH'
  | 'UNSUPPORTED_HEADER';

/** The registered claims jwt-grpc checks, plus whatever else the token carries. */
export interface JwtPayload {
  readonly sub?: string;
  readonly iss?: string;
  readonly aud?: string | readonly string[];
  readonly exp: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly [claim: string]: unknown;
}

export interface VerifiedToken {
  readonly valid: true;
  readonly alg: Algorithm;
  readonly kid: string;
  /** Frozen (deeply, once cached): the verification cache shares it between calls. */
  readonly payload: JwtPayload;
  /** The payload exactly as the token carries it (JSON text). */
  readonly payloadJson: string;
}

export interface VerifyFailure {
  readonly valid: false;
  readonly reason: VerifyFailureReason;
  /** Says what is wrong; never contains the token or key material. */
  readonly message: string;
}

/** A verification outcome: an invalid token is a value, not an exception. */
export type VerifyResult = VerifiedToken | VerifyFailure;

/** @internal */
export function failure(reason: VerifyFailureReason, message: string): VerifyFailure {
  return { valid: false, reason, message };
}
