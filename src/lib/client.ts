/**
 * `jwt-grpc/client`: the consumer side. Call JwtService ({@link createJwtClient}), attach
 * its tokens to your calls ({@link jwtCallCredentials}), and check the tokens a service
 * receives: against the issuer's published keys ({@link createRemoteVerifier}) in an
 * interceptor on either transport ({@link jwtAuthInterceptor}), read in a handler with
 * {@link verifiedClaims} or {@link optionalVerifiedClaims}.
 *
 * Loads none of the issuer: no HTTP/2 server, cluster or issuance policy (a test records
 * what `import('jwt-grpc/client')` loads). `@grpc/grpc-js`, a peer dependency, loads with
 * the first client, credentials or interceptor, not with the import; `@opentelemetry/api`
 * once the app has registered an SDK.
 *
 * @example
 * ```ts
 * import { createJwtClient, createRemoteVerifier, jwtAuthInterceptor } from 'jwt-grpc/client';
 *
 * const issuer = createJwtClient('auth.internal:50051');
 * const auth = jwtAuthInterceptor(createRemoteVerifier(issuer, { audience: 'greeter' }));
 * ```
 * @packageDocumentation
 * @module jwt-grpc/client
 */
export { createJwtClient, type JwtClient, type JwtClientOptions, type JwtCallOptions } from '../client/jwt-client.js';
export { jwtCallCredentials, type JwtCallCredentials } from '../client/call-credentials.js';
// On behalf of a caller: its token exchanged for one scoped to the callee (docs/token-exchange.md).
export { onBehalfOf, type OnBehalfOfOptions, type TokenExchanger } from '../client/on-behalf-of.js';
export type { JwtCallCredentialsOptions, TokenIssuer } from '../client/token-source.js';
export {
  createRemoteVerifier,
  type JwksIssuer,
  type RemoteVerifier,
  type RemoteVerifierOptions,
} from '../protected-service/remote-verifier.js';
export type { HttpJwksLocation } from '../protected-service/remote-jwks-http.js';
export {
  jwtAuthInterceptor,
  optionalVerifiedClaims,
  verifiedClaims,
  type CallWithMetadata,
  type JwtAuthInterceptor,
} from '../protected-service/auth-interceptor.js';
export type { MethodRule, AuthorizeCall, UnlistedMethods } from '../protected-service/authorize.js';
export { HEALTH_METHODS } from '../client/defaults.js';
export type { JwtAuthInterceptorOptions, TokenVerifier } from '../protected-service/authenticate.js';
// What verify gives and takes, beside the verifier (also in jwt-grpc/tokens, the same declarations).
export { ANY_AUDIENCE, type AnyAudience, type ClaimExpectations } from '../tokens/claims.js';
export type { JwtPayload, VerifiedToken, VerifyFailure, VerifyFailureReason, VerifyResult } from '../tokens/result.js';
