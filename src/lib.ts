/**
 * jwt-grpc: sign and verify JSON Web Tokens as a gRPC service.
 *
 * This module is the whole public API. Importing it starts nothing: no server, no
 * timers, no key generation.
 *
 * - Keys: {@link generateKeys}, {@link loadKeys}, {@link importKeys}, {@link exportKeys}, {@link KeySet}
 * - Tokens without a server: {@link createSigner}, {@link createVerifier}
 * - Servers: {@link createJwtServer}, {@link addJwtService}
 * - Many cores: {@link runCluster}, {@link parseNodeMaxProcs}
 * @packageDocumentation
 */
export { ALGORITHMS, type Algorithm, isAlgorithm } from './algorithms.js';
export { JwtGrpcError, type JwtGrpcErrorCode } from './errors.js';
export { type Logger, createStderrLogger, silentLogger } from './log.js';

export { KeySet, type KeyInfo } from './keys/key-set.js';
export { generateKeys } from './keys/generate.js';
export { importKeys, type KeyInput } from './keys/import.js';
export { loadKeys } from './keys/load.js';
export { exportKeys, type Jwk } from './keys/export.js';

export { createSigner, type Signer, type SignedToken } from './tokens/sign.js';
export { createVerifier, type Verifier, type VerifierOptions } from './tokens/verify.js';
export type { ClaimExpectations } from './tokens/claims.js';
export type { JwtPayload, VerifiedToken, VerifyFailure, VerifyFailureReason, VerifyResult } from './tokens/result.js';

export { addJwtService, type JwtServiceHandle } from './service/add.js';
export type { JwtServiceOptions } from './service/options.js';
export { loadSubjects } from './service/load-subjects.js';
export {
  SERVICE_NAME,
  type GenerateJwtRequest,
  type GenerateJwtResponse,
  type VerifyJwtRequest,
  type VerifyJwtResponse,
  type GetJwksRequest,
  type GetJwksResponse,
} from './service/definition.js';
export { PROTO_PATH } from './package-root.js';

export { createJwtServer, type JwtServer, type JwtServerOptions } from './server/create.js';
export type { TransportOptions } from './server/channel-options.js';

export { runCluster, type ClusterOptions, type ClusterHandle } from './cluster/run.js';
export { parseNodeMaxProcs } from './cluster/max-procs.js';
