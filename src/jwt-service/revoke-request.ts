/**
 * What a RevokeJwt request names: the jti to revoke and how long to keep it (the token's
 * `exp` plus the clock tolerance). A refusal is INVALID_ARGUMENT naming the field.
 */
import type { Revocation } from '../contracts/revocation-store.js';
import type { KeyVerifier } from '../tokens/verify.js';
import { JwtGrpcError } from '../base/errors.js';
import type { RevokeJwtRequest } from './messages.js';
import type { ResolvedServiceOptions } from './options.js';

/** Longest `jti` RevokeJwt takes, and longest `reason`: ids and notes, not documents. */
const MAX_JTI_LENGTH = 256;
const MAX_REASON_LENGTH = 256;

/**
 * By `jwt`: the token must verify with `verifier` (this server's keys), and carry a jti.
 * By `jti` and `expires_at`: the exp must lie ahead, at most maxTtlSeconds. `now` in Unix seconds.
 * `statusIndexOf` is the server's status list's `indexOf` (the index only when the token
 * names that list); without a list, the token's index is kept as it is.
 */
export function revocationOf(
  request: RevokeJwtRequest,
  verifier: KeyVerifier,
  options: Pick<ResolvedServiceOptions, 'clockToleranceSeconds' | 'maxTokenLength' | 'maxTtlSeconds'>,
  now: number,
  statusIndexOf?: (claims: Readonly<Record<string, unknown>>) => number | undefined,
): Revocation {
  const invalid = (message: string): JwtGrpcError => new JwtGrpcError('ERR_INVALID_REQUEST', message);
  const { clockToleranceSeconds, maxTokenLength, maxTtlSeconds } = options;
  if (request.reason.length > MAX_REASON_LENGTH) throw invalid(`reason: is longer than ${MAX_REASON_LENGTH} characters`);
  const reason = request.reason.length === 0 ? undefined : request.reason;
  if (request.jwt.length > 0) {
    if (request.jti.length > 0 || request.expires_at !== 0) throw invalid('give jwt, or jti and expires_at, not both');
    if (request.jwt.length > maxTokenLength)
      throw invalid(`jwt: is ${request.jwt.length} characters; the limit is ${maxTokenLength} (option maxTokenLength)`);
    const result = verifier.verifyUncached(request.jwt);
    // Only a token of this server that verifies may be revoked by value: anything else could name any jti.
    if (!result.valid)
      throw invalid(`jwt: does not verify (${result.reason}: ${result.message}); a token that does not verify cannot be revoked`);
    const jti = result.payload['jti'];
    if (typeof jti !== 'string' || jti.length === 0) throw invalid('jwt: has no jti claim (issued with jti off), so it cannot be revoked');
    if (jti.length > MAX_JTI_LENGTH) throw invalid(`jwt: its jti is longer than ${MAX_JTI_LENGTH} characters`);
    const statusIndex = statusIndexOf === undefined ? statusListIndex(result.payload['status']) : statusIndexOf(result.payload);
    return {
      jti,
      expiresAt: result.payload.exp + clockToleranceSeconds,
      ...(reason !== undefined && { reason }),
      ...(statusIndex !== undefined && { statusIndex }),
    };
  }
  if (request.jti.length === 0) throw invalid('give jwt, or jti and expires_at');
  if (request.jti.length > MAX_JTI_LENGTH) throw invalid(`jti: is longer than ${MAX_JTI_LENGTH} characters`);
  const exp = request.expires_at;
  if (!Number.isSafeInteger(exp) || exp <= 0)
    throw invalid("expires_at: is required with jti: the token's exp, seconds since the Unix epoch");
  if (exp + clockToleranceSeconds <= now) throw invalid('expires_at: has passed; the token has expired already');
  if (exp > now + maxTtlSeconds + clockToleranceSeconds) {
    throw invalid(`expires_at: is more than maxTtlSeconds (${maxTtlSeconds}) from now; no token of this server lives that long`);
  }
  return { jti: request.jti, expiresAt: exp + clockToleranceSeconds, ...(reason !== undefined && { reason }) };
}

/**
 * The token's index in a Token Status List (`status.status_list.idx`,
 * https://datatracker.ietf.org/doc/draft-ietf-oauth-status-list/), when it has one: kept
 * with the revocation so the list can mark it.
 */
function statusListIndex(status: unknown): number | undefined {
  const idx = (status as { status_list?: { idx?: unknown } } | null | undefined)?.status_list?.idx;
  return Number.isSafeInteger(idx) && (idx as number) >= 0 ? (idx as number) : undefined;
}
