/**
 * jwt-grpc's gRPC server on node:http2: the parts a caller uses. The rest of this folder
 * is its implementation.
 */
export { createHttp2GrpcServer, type Http2GrpcServer, type ServerTlsOptions } from './server.js';
export type { Http2GrpcServerOptions } from './options.js';
export * as HTTP2_SERVER_DEFAULTS from './defaults.js';
