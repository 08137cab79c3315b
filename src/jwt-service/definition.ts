import { loadSync } from '@grpc/proto-loader';
import { PROTO_PATH } from '../package-root.js';
import { PROTO_LOADER_OPTIONS } from '../protos/load.js';
import type { MethodDescriptor, ServiceDescriptor } from '../transport/handler-api.js';
import { decodeGenerateJwtRequest, decodeGetJwksRequest, decodeGetStatusListRequest, decodeRevokeJwtRequest, decodeVerifyJwtRequest } from './codec/decode.js';
import {
  encodeGenerateJwtResponse,
  encodeGetJwksResponse,
  encodeGetStatusListResponse,
  encodeRevokeJwtResponse,
  encodeVerifyJwtResponse,
} from './codec/encode.js';

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
 * The full path of every JwtService method. On a server that is both the issuer and a
 * service protected by {@link jwtAuthInterceptor}, make them public: a caller needs no
 * token to get one (GenerateJwt), nor to fetch the keys (GetJwks); the issuer guards its
 * methods itself (the policy, RevokeJwt's admin secret).
 *
 * @example
 * ```ts
 * // hidden: import { Server } from '@grpc/grpc-js';
 * // hidden: declare const keys: KeySet, verifier: Verifier;
 * const server = new Server({ interceptors: [jwtAuthInterceptor(verifier, { publicMethods: [...HEALTH_METHODS, ...JWT_SERVICE_METHODS] })] });
 * addJwtService(server, { keys });
 * ```
 */
export const JWT_SERVICE_METHODS: readonly string[] = Object.freeze(
  ['GenerateJwt', 'VerifyJwt', 'GetJwks', 'GetStatusList', 'RevokeJwt'].map((method) => `/${SERVICE_NAME}/${method}`),
);

/**
 * The server's side of each method's codecs: requests in, responses out (src/jwt-service/codec/).
 * A client's side (request out, response in) stays proto-loader's.
 */
const SERVER_CODECS: Record<string, { requestDeserialize: (buf: Buffer) => unknown; responseSerialize: (value: never) => Buffer }> = {
  GenerateJwt: { requestDeserialize: decodeGenerateJwtRequest, responseSerialize: encodeGenerateJwtResponse },
  VerifyJwt: { requestDeserialize: decodeVerifyJwtRequest, responseSerialize: encodeVerifyJwtResponse },
  GetJwks: { requestDeserialize: decodeGetJwksRequest, responseSerialize: encodeGetJwksResponse },
  GetStatusList: { requestDeserialize: decodeGetStatusListRequest, responseSerialize: encodeGetStatusListResponse },
  RevokeJwt: { requestDeserialize: decodeRevokeJwtRequest, responseSerialize: encodeRevokeJwtResponse },
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
      if (codecs === undefined) throw new Error(`${SERVICE_NAME}.${name} has no codec in src/jwt-service/codec/`);
      service[name] = { ...method, ...codecs } as MethodDescriptor<unknown, unknown>;
    }
    loaded = service;
  }
  return loaded;
}
