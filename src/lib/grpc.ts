/**
 * `jwt-grpc/grpc`: the gRPC vocabulary both transports and both sides share. Status codes
 * ({@link GrpcStatus}) and the error that carries one ({@link GrpcStatusError}, which
 * createJwtClient rejects with and handlers throw), metadata ({@link CallMetadata}), and
 * the shapes of your own services and interceptors on createJwtServer
 * ({@link ServiceDescriptor}, {@link ServiceImplementation}, {@link CallInterceptor}).
 *
 * Apart from the server and the client because both use it: a client that tests a status
 * loads no server, and a service's code names no transport.
 *
 * @example
 * ```ts
 * import { GrpcStatus, GrpcStatusError } from 'jwt-grpc/grpc';
 *
 * throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such greeting');
 * ```
 * @packageDocumentation
 * @module jwt-grpc/grpc
 */
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
} from '../contracts/handler-api.js';
