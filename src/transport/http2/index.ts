/**
 * jwt-grpc's own gRPC server: the parts a caller uses. The rest of this folder is its
 * implementation: the gRPC calls here, HTTP/2 itself (frames, HPACK, flow control) in ./wire.
 */
export { createHttp2GrpcServer, type Http2GrpcServer } from './server.js';
export type { Http2GrpcServerOptions } from './options.js';
