import { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../base/errors.js';
import { newJti } from '../tokens/jti.js';
import { claimsJsonProblem } from './claims-json.js';
import type { GenerateJwtRequest } from './messages.js';
import type { ResolvedServiceOptions } from './options.js';
import type { SubjectPool } from './subject-pool.js';

/**
 * Claims the service sets itself; claims_json may not: the registered ones
 * ([RFC 7519 §4.1](https://www.rfc-editor.org/rfc/rfc7519#section-4.1)), and who asked
 * (`client_id`, [RFC 9068 §2.2](https://www.rfc-editor.org/rfc/rfc9068#section-2.2)) and
 * the certificate a token is bound to (`cnf`, [RFC 8705 §3.1](https://www.rfc-editor.org/rfc/rfc8705#section-3.1)),
 * which a caller naming for itself would forge.
 */
// `status` points verifiers to a Token Status List: only the server's own list may be named.
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'cnf',
  'status',
]);

function invalid(field: string, message: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_REQUEST', `${field}: ${message}`, { field });
}

function parseExtraClaims(json: string, maxBytes: number): Record<string, unknown> | undefined {
  if (json.length === 0) return undefined;
  // Bound before parsing: the size limit also bounds nesting depth and parse time.
  if (Buffer.byteLength(json) > maxBytes) throw invalid('claims_json', `is longer than ${maxBytes} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalid('claims_json', 'is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('claims_json', 'must be a JSON object');
  }
  // What is signed is the parsed value re-serialized: refused unless that says what was asked.
  const problem = claimsJsonProblem(json);
  if (problem !== undefined) throw invalid('claims_json', problem);
  for (const claim of Object.keys(value)) {
    if (RESERVED_CLAIMS.has(claim)) throw invalid('claims_json', `may not set the reserved claim "${claim}"`);
  }
  return value as Record<string, unknown>;
}

/**
 * Turns a GenerateJwt request into the claims to sign: `{sub, iat, exp}` always, in that
 * order (the Go peer in bench/peers/go/main.go signs the same three, so with `jti` off both
 * servers sign payloads of the same size), then a fresh `jti` (option `jti`, default on),
 * iss, aud and extra claims.
 * Throws `ERR_INVALID_REQUEST` naming the field.
 */
export function requestClaims(
  request: GenerateJwtRequest,
  options: ResolvedServiceOptions,
  pool: SubjectPool | undefined,
  nowSeconds: number,
): { sub: string; exp: number; claims: Record<string, unknown> } {
  let sub = request.subject;
  if (sub.length === 0) {
    if (pool === undefined) throw invalid('subject', 'is empty and the server has no subject pool');
    sub = pool.next();
  } else if (sub.length > options.maxSubjectLength) {
    throw invalid('subject', `is longer than ${options.maxSubjectLength} characters`);
  }
  const ttl = request.ttl_seconds === 0 ? options.defaultTtlSeconds : request.ttl_seconds;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > options.maxTtlSeconds) {
    throw invalid('ttl_seconds', `must be from 1 to ${options.maxTtlSeconds} (0 means ${options.defaultTtlSeconds})`);
  }
  if (request.audience.length > options.maxSubjectLength) {
    throw invalid('audience', `is longer than ${options.maxSubjectLength} characters`);
  }
  const extra = parseExtraClaims(request.claims_json, options.maxClaimsJsonBytes);
  const exp = nowSeconds + ttl;
  // sub, iat, exp first, in that order; the optional ones only when present, each added by
  // its literal name (one object shape per set of options, no spread of a temporary object).
  const claims: Record<string, unknown> = { sub, iat: nowSeconds, exp };
  if (options.jti) claims['jti'] = newJti();
  if (options.issuer !== undefined) claims['iss'] = options.issuer;
  if (request.audience.length > 0) claims['aud'] = request.audience;
  // Spread, not Object.assign: a "__proto__" key from JSON.parse must stay a plain claim.
  return { sub, exp, claims: extra === undefined ? claims : { ...claims, ...extra } };
}
