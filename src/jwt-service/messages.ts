/**
 * JwtService's messages (proto/jwt.proto) as plain objects, in the shape
 * @grpc/proto-loader gives them under the service's loader options (field names as in
 * the proto, int64 as Number, absent fields as '' / 0 / false). The wire contract in
 * TypeScript: the codecs, the service logic and the public API all speak these types.
 */
import type { VerifyFailureReason } from '../tokens/result.js';

/**
 * `GenerateJwt`'s request: which algorithm, and what to put in the token.
 *
 * @example
 * ```ts
 * const request: GenerateJwtRequest = { algorithm: 'ES256', subject: 'ada@example.com', audience: '', ttl_seconds: 0, claims_json: '' };
 * ```
 */
export interface GenerateJwtRequest {
  algorithm: string;
  subject: string;
  audience: string;
  ttl_seconds: number;
  claims_json: string;
}

/**
 * `GenerateJwt`'s response: the token, its subject and key id, and its `exp`.
 *
 * @example
 * ```ts
 * // hidden: declare const client: Record<string, (request: object, callback: (err: Error | null, response: any) => void) => void>;
 * // client: a grpc-js client of PROTO_PATH, loaded with { keepCase: true, longs: Number }
 * client.GenerateJwt({ algorithm: 'HS256' }, (err: Error | null, response: GenerateJwtResponse) => {
 *   if (err === null) console.log(response.jwt, response.kid, response.expires_at);
 * });
 * ```
 */
export interface GenerateJwtResponse {
  jwt: string;
  sub: string;
  kid: string;
  expires_at: number;
}

/**
 * `VerifyJwt`'s request: the token, and optionally the audience and issuer it must carry.
 *
 * @example
 * ```ts
 * // hidden: declare const token: string;
 * const request: VerifyJwtRequest = { jwt: token, audience: 'api', issuer: '' };
 * ```
 */
export interface VerifyJwtRequest {
  jwt: string;
  audience: string;
  issuer: string;
}

/**
 * `VerifyJwtResponse.Reason` of proto/jwt.proto: why a token failed, or
 * `REASON_UNSPECIFIED` for a valid one.
 *
 * @example
 * ```ts
 * // hidden: declare const result: VerifyResult;
 * const reason: VerifyJwtReason = result.valid ? 'REASON_UNSPECIFIED' : result.reason; // result of Verifier.verify
 * ```
 */
export type VerifyJwtReason = VerifyFailureReason | 'REASON_UNSPECIFIED';

/**
 * `VerifyJwt`'s response: an invalid token is a normal answer with `valid: false` and a reason.
 *
 * @example
 * ```ts
 * // hidden: declare const client: Record<string, (request: object, callback: (err: Error | null, response: any) => void) => void>;
 * // hidden: declare const token: string;
 * client.VerifyJwt({ jwt: token }, (err: Error | null, response: VerifyJwtResponse) => {
 *   if (err === null && !response.valid) console.log(response.reason); // e.g. 'EXPIRED'
 * });
 * ```
 */
export interface VerifyJwtResponse {
  valid: boolean;
  sub: string;
  claims_json: string;
  reason: VerifyJwtReason;
}

/**
 * `GetJwks`' request: it has no fields.
 *
 * @example
 * ```ts
 * const request: GetJwksRequest = {};
 * ```
 */
export type GetJwksRequest = Record<string, never>;

/**
 * `GetJwks`' response: the public JWK Set as JSON text.
 *
 * @example
 * ```ts
 * // hidden: declare const client: Record<string, (request: object, callback: (err: Error | null, response: any) => void) => void>;
 * client.GetJwks({}, (err: Error | null, response: GetJwksResponse) => {
 *   if (err === null) console.log((JSON.parse(response.jwks_json) as { keys: Jwk[] }).keys);
 * });
 * ```
 */
export interface GetJwksResponse {
  jwks_json: string;
}

/**
 * `GetStatusList`' request: the list a token's `status.status_list.uri` names; empty for
 * the one the server puts new tokens into.
 *
 * @example
 * ```ts
 * const request: GetStatusListRequest = { uri: 'https://auth.example/statuslists/1' };
 * ```
 */
export interface GetStatusListRequest {
  uri: string;
}

/**
 * `GetStatusList`' response: the signed Status List Token (`typ: statuslist+jwt`).
 *
 * @example
 * ```ts
 * // hidden: declare const client: Record<string, (request: object, callback: (err: Error | null, response: any) => void) => void>;
 * client.GetStatusList({ uri: '' }, (err: Error | null, response: GetStatusListResponse) => {
 *   if (err === null) console.log(response.token.split('.').length); // 3
 * });
 * ```
 */
export interface GetStatusListResponse {
  token: string;
}

/**
 * `RevokeJwt`'s request: the token (`jwt`), or its `jti` and `expires_at` (its `exp`), and
 * an optional `reason` for the audit log.
 *
 * @example
 * ```ts
 * // hidden: declare const token: string;
 * const byToken: RevokeJwtRequest = { jwt: token, jti: '', expires_at: 0, reason: 'laptop stolen' };
 * const byId: RevokeJwtRequest = { jwt: '', jti: 'mB3jv0pQ7xX9cJqYg1a2Rw', expires_at: 1767225600, reason: '' };
 * ```
 */
export interface RevokeJwtRequest {
  jwt: string;
  jti: string;
  expires_at: number;
  reason: string;
}

/**
 * `RevokeJwt`'s response: `revoked` is true, and `expires_at` says when the revocation is
 * forgotten (the token's `exp` plus the server's clock tolerance, seconds since the epoch).
 *
 * @example
 * ```ts
 * // hidden: declare const jwt: JwtClient;
 * // hidden: declare const token: string;
 * const answer: RevokeJwtResponse = await jwt.revokeJwt({ jwt: token }, { metadata: new CallMetadata().set('authorization', 'Bearer ' + process.env.ADMIN_TOKEN) });
 * console.log(answer.revoked, new Date(answer.expires_at * 1000));
 * ```
 */
export interface RevokeJwtResponse {
  revoked: boolean;
  expires_at: number;
}

/**
 * `ExchangeToken`'s request: the parameters of RFC 8693 section 2.1 by their names there
 * (one `audience` and one `resource` at most). Absent fields are ''.
 *
 * @example
 * ```ts
 * // hidden: declare const token: string;
 * const request: ExchangeTokenRequest = {
 *   subject_token: token,
 *   subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
 *   actor_token: '',
 *   actor_token_type: '',
 *   audience: 'billing',
 *   resource: '',
 *   scope: 'invoices:read',
 *   requested_token_type: '',
 * };
 * ```
 */
export interface ExchangeTokenRequest {
  subject_token: string;
  subject_token_type: string;
  actor_token: string;
  actor_token_type: string;
  audience: string;
  resource: string;
  scope: string;
  requested_token_type: string;
}

/**
 * `ExchangeToken`'s response, as RFC 8693 section 2.2.1 names its members: the new token,
 * its type, `Bearer`, its lifetime in seconds, and its scope when that is not the one asked.
 *
 * @example
 * ```ts
 * // hidden: declare const answer: ExchangeTokenResponse;
 * console.log(answer.access_token, answer.issued_token_type, answer.expires_in, answer.scope);
 * ```
 */
export interface ExchangeTokenResponse {
  access_token: string;
  issued_token_type: string;
  token_type: string;
  expires_in: number;
  scope: string;
}
