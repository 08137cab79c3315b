/**
 * jwt-grpc: sign and verify JSON Web Tokens as a gRPC service.
 *
 * This module is the whole public API. Importing it starts nothing: no server, no
 * timers, no key generation.
 *
 * - Keys: {@link generateKeys}, {@link loadKeys}, {@link importKeys}, {@link exportKeys}, {@link mergeKeySets}, {@link KeySet}
 * - Tokens without a server: {@link createSigner}, {@link createVerifier}
 * - Servers: {@link createJwtServer} (on jwt-grpc's own HTTP/2 transport or grpc-js), {@link addJwtService}
 * - The JWK Set and OpenID discovery over HTTP in your own server: {@link jwksHandler}
 * - Your own services and interceptors on either transport: {@link ServiceDescriptor}, {@link CallInterceptor}, {@link GrpcStatusError}
 * - Many cores: {@link runCluster}, {@link parseNodeMaxProcs}
 * - Consumers: {@link createJwtClient}, {@link jwtCallCredentials}, {@link createRemoteVerifier},
 *   {@link jwtAuthInterceptor}, {@link verifiedClaims}, {@link optionalVerifiedClaims}
 * @packageDocumentation
 */
export { ALGORITHMS, type Algorithm, isAlgorithm } from './algorithms/names.js';
export { JwtGrpcError, type JwtGrpcErrorCode } from './errors.js';
export { type LogFormat, type LogLevel, type Logger, type StderrLoggerOptions, createStderrLogger, silentLogger } from './log.js';

export { KeySet, type KeyInfo } from './keys/key-set.js';
export { generateKeys } from './keys/generate.js';
export { mergeKeySets } from './keys/merge.js';
export { importKeys, type KeyInput } from './keys/import.js';
export { loadKeys } from './keys/load.js';
export { exportKeys, type Jwk } from './keys/export.js';

export { createSigner, type Signer, type SignedToken, type SignerOptions } from './tokens/sign.js';
export { createVerifier, type Verifier, type VerifierOptions } from './tokens/verify.js';
export { ANY_AUDIENCE, type AnyAudience, type ClaimExpectations } from './tokens/claims.js';
export type { JwtPayload, VerifiedToken, VerifyFailure, VerifyFailureReason, VerifyResult } from './tokens/result.js';

export { addJwtService, type JwtServiceHandle } from './jwt-service/add.js';
export type { StatusClaim, StatusListIssuer } from './revocation/status-list/issuer.js';
export type { JwtServiceOptions } from './jwt-service/options.js';
export { loadSubjects } from './jwt-service/load-subjects.js';
export { JWT_SERVICE_METHODS, SERVICE_NAME } from './jwt-service/definition.js';
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
} from './jwt-service/messages.js';
export { PROTO_PATH } from './package-root.js';

export { createJwtServer, type JwtServer } from './server/create.js';
export type { JwtServerOptions, Transport, TransportOptions } from './server/options.js';
export { jwksHandler, type JwksHandlerOptions, type JwksRequestHandler } from './discovery/handler.js';
export {
  GrpcStatus,
  type StatusCode,
  CallMetadata,
  type CallMetadataValue,
  GrpcStatusError,
  CallKey,
  type CallContext,
  type CallerIdentity,
  type CallOutcome,
  type CallInterceptor,
  type ResponseStream,
  type ResponseCompression,
  type UnaryHandler,
  type ServerStreamHandler,
  type ClientStreamHandler,
  type BidiStreamHandler,
  type Handler,
  type MethodDescriptor,
  type ServiceDescriptor,
  type ServiceImplementation,
  type ServerTlsOptions,
} from './transport/handler-api.js';

// Who may get which token: the issuance policy (docs/policy.md).
export { checkPolicy, type JwtPolicy, type CallerPolicy } from './policy/check.js';
export { loadPolicy } from './policy/load.js';
export { JWT_POLICY_SCHEMA } from './policy/schema.js';

export { runCluster, type ClusterOptions, type ClusterHandle } from './cluster/run.js';
export { parseNodeMaxProcs } from './cluster/max-procs.js';

// The consumer side: call JwtService, attach its tokens to calls, check the tokens a service receives.
export { createJwtClient, type JwtClient, type JwtClientOptions, type JwtCallOptions } from './client/jwt-client.js';
export { jwtCallCredentials } from './client/call-credentials.js';
export type { JwtCallCredentialsOptions, TokenIssuer } from './client/token-source.js';
export { createRemoteVerifier, type JwksIssuer, type RemoteVerifier, type RemoteVerifierOptions } from './client/remote-verifier.js';
export type { HttpJwksLocation } from './client/remote-jwks-http.js';
export { jwtAuthInterceptor, optionalVerifiedClaims, verifiedClaims, type CallWithMetadata, type JwtAuthInterceptor } from './client/auth-interceptor.js';
export type { MethodRule, AuthorizeCall, UnlistedMethods } from './client/authorize.js';
export { HEALTH_METHODS } from './client/defaults.js';
export type { JwtAuthInterceptorOptions, TokenVerifier } from './client/authenticate.js';
