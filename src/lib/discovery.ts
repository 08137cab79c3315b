/**
 * `jwt-grpc/discovery`: the JWK Set and OpenID discovery documents over HTTP, as a
 * `node:http` request handler for a server of your own ({@link jwksHandler}).
 *
 * Apart from the gRPC server because it is HTTP, not gRPC: an issuer that signs with
 * `jwt-grpc/tokens` publishes its keys with this alone.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { jwksHandler } from 'jwt-grpc/discovery';
 * import { generateKeys } from 'jwt-grpc/keys';
 *
 * const handle = jwksHandler({ keys: await generateKeys({ algorithms: ['ES256'] }) });
 * createServer((req, res) => handle(req, res) || res.writeHead(404).end()).listen(0).unref();
 * ```
 * @packageDocumentation
 * @module jwt-grpc/discovery
 */
export { jwksHandler, type JwksHandlerOptions, type JwksRequestHandler } from '../discovery/handler.js';
