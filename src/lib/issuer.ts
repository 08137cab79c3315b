/**
 * jwt-grpc: sign and verify JSON Web Tokens as a gRPC service. This entry point is the
 * issuer: the JwtService on a server of its own ({@link createJwtServer}, on jwt-grpc's
 * own HTTP/2 transport or grpc-js) or on your grpc-js server ({@link addJwtService}), its
 * messages and .proto, the subjects it hands out, and the issuance policy (who may get
 * which token: {@link checkPolicy}, {@link loadPolicy}, {@link JWT_POLICY_SCHEMA}).
 *
 * Importing it starts nothing: no server, no timers, no key generation. Each other concern
 * has an entry point of its own, and an export lives in exactly one, but for a verifier's
 * result types, exported beside each verifier (docs/library.md, "Entry points"):
 *
 * - `jwt-grpc/keys`: generate, load, import, export and merge signing keys
 * - `jwt-grpc/tokens`: sign and verify tokens without a server
 * - `jwt-grpc/client`: the consumer SDK: call JwtService, attach its tokens, check the tokens a service receives
 * - `jwt-grpc/cluster`: one server on every core
 * - `jwt-grpc/discovery`: the JWK Set and OpenID discovery over HTTP in your own server
 * - `jwt-grpc/grpc`: status codes, metadata, handlers and interceptors of both transports
 * - `jwt-grpc/errors`: the error every entry point throws
 * - `jwt-grpc/log`: the logger every entry point takes
 *
 * @example
 * ```ts
 * import { createJwtServer } from 'jwt-grpc';
 * import { generateKeys } from 'jwt-grpc/keys';
 *
 * await using server = createJwtServer({ keys: await generateKeys({ algorithms: ['ES256'] }) });
 * await server.listen('127.0.0.1:0');
 * ```
 * @packageDocumentation
 * @module jwt-grpc
 */
export { createJwtServer, type JwtServer } from '../server/create.js';
export type { JwtServerOptions, Transport, TransportOptions } from '../server/options.js';

export { addJwtService, type AddJwtServiceOptions, type JwtServiceHandle } from '../jwt-service/add.js';
export type { JwtServiceOptions } from '../jwt-service/options.js';
export type { StatusClaim, StatusListIssuer } from '../revocation/status-list/issuer.js';
export { loadSubjects } from '../jwt-service/load-subjects.js';
export { JWT_SERVICE_METHODS, SERVICE_NAME } from '../jwt-service/definition.js';
export type {
  GenerateJwtRequest,
  GenerateJwtResponse,
  VerifyJwtRequest,
  VerifyJwtReason,
  VerifyJwtResponse,
  GetJwksRequest,
  GetJwksResponse,
  GetStatusListRequest,
  GetStatusListResponse,
  RevokeJwtRequest,
  RevokeJwtResponse,
  ExchangeTokenRequest,
  ExchangeTokenResponse,
} from '../jwt-service/messages.js';
export { PROTO_PATH } from '../base/package-root.js';

// Who may get which token: the issuance policy (docs/policy.md).
export { checkPolicy, type JwtPolicy, type CallerPolicy, type IssuanceRate, DEFAULT_CALLER_RATE } from '../policy/document.js';
export { loadPolicy } from '../policy/load.js';
export { JWT_POLICY_SCHEMA, MAX_RATE } from '../policy/schema.js';

// Whose tokens may be exchanged for ours: the trust file of token exchange (docs/token-exchange.md).
export { checkTrust, loadTrust, type TrustFile, type TrustedIssuer } from '../exchange/trust.js';
export { JWT_TRUST_SCHEMA } from '../exchange/trust-schema.js';
export type { ExchangeRule } from '../policy/document.js';
