import { loadSync } from '@grpc/proto-loader';
import { PROTO_PATH } from '../package-root.js';
import type { MethodDescriptor, ServiceDescriptor } from '../transport/handler-api.js';
import { decodeGenerateJwtRequest, decodeGetJwksRequest, decodeVerifyJwtRequest } from './codec/decode.js';
import { encodeGenerateJwtResponse, encodeGetJwksResponse, encodeVerifyJwtResponse } from './codec/encode.js';

/**
 * Fully qualified name of the service, as clients, health checks and ghz's --call name it.
 *
 * @example
 * ```ts
 * // hidden: declare const healthClient: { check(request: { service: string }, callback: (err: Error | null, response?: { status: string }) => void): void };
 * healthClient.check({ service: SERVICE_NAME }, (err, response) => console.log(response?.status)); // 'SERVING'
 * ```
 */
export const SERVICE_NAME = 'jwt.services.JwtService';

/**
 * keepCase: field names as in the proto (ttl_seconds), so the code reads like the
 * contract. longs: Number, since ttl_seconds and expires_at are seconds far below 2^53
 * and an out-of-range int64 still comes out as a huge number that the bounds refuse.
 * defaults: absent fields read as '' / 0, as proto3 means them.
 */
export const PROTO_LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true } as const;

/**
 * The server's side of each method's codecs: requests in, responses out (src/service/codec/).
 * A client's side (request out, response in) stays proto-loader's.
 */
const SERVER_CODECS: Record<string, { requestDeserialize: (buf: Buffer) => unknown; responseSerialize: (value: never) => Buffer }> = {
  GenerateJwt: { requestDeserialize: decodeGenerateJwtRequest, responseSerialize: encodeGenerateJwtResponse },
  VerifyJwt: { requestDeserialize: decodeVerifyJwtRequest, responseSerialize: encodeVerifyJwtResponse },
  GetJwks: { requestDeserialize: decodeGetJwksRequest, responseSerialize: encodeGetJwksResponse },
};

let loaded: ServiceDescriptor | undefined;

/**
 * JwtService's methods, loaded once per process: proto-loader's paths and client codecs,
 * with the server-side codecs replaced by ours. Either transport serves it.
 */
export function jwtServiceDefinition(): ServiceDescriptor {
  if (loaded === undefined) {
    const generic = loadSync(PROTO_PATH, PROTO_LOADER_OPTIONS)[SERVICE_NAME] as Record<string, MethodDescriptor<unknown, unknown>> | undefined;
    if (generic === undefined) throw new Error(`${PROTO_PATH} does not define ${SERVICE_NAME}`);
    const service: Record<string, MethodDescriptor<unknown, unknown>> = {};
    for (const [name, method] of Object.entries(generic)) {
      const codecs = SERVER_CODECS[name];
      if (codecs === undefined) throw new Error(`${SERVICE_NAME}.${name} has no codec in src/service/codec/`);
      service[name] = { ...method, ...codecs } as MethodDescriptor<unknown, unknown>;
    }
    loaded = service;
  }
  return loaded;
}
