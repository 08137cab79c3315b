import { PROTO_PATH } from '../package-root.js';
import { protoLoader } from '../optional-deps.js';
import { PROTO_LOADER_OPTIONS, lazyProtoService } from '../protos/load.js';
import type { MethodDescriptor, ServiceDescriptor } from '../transport/handler-api.js';
import {
  decodeGenerateJwtRequest,
  decodeGetJwksRequest,
  decodeGetStatusListRequest,
  decodeRevokeJwtRequest,
  decodeVerifyJwtRequest,
} from './codec/decode.js';
import {
  encodeGenerateJwtResponse,
  encodeGetJwksResponse,
  encodeGetStatusListResponse,
  encodeRevokeJwtResponse,
  encodeVerifyJwtResponse,
} from './codec/encode.js';
import { internalError } from '../assert.js';

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

/** Every JwtService method is unary (proto/jwt.proto; a test holds the two together). @internal */
export const JWT_SERVICE_METHOD_SHAPES = Object.fromEntries(
  Object.keys(SERVER_CODECS).map((name) => [name, { requestStream: false, responseStream: false }]),
);

/** proto-loader's definition of JwtService: the client-side codecs. */
function loadJwtProto(): ServiceDescriptor {
  const generic = protoLoader().loadSync(PROTO_PATH, PROTO_LOADER_OPTIONS)[SERVICE_NAME] as
    | Record<string, MethodDescriptor<unknown, unknown>>
    | undefined;
  if (generic === undefined) throw internalError(`${PROTO_PATH} does not define ${SERVICE_NAME}`);
  return generic;
}

let loaded: ServiceDescriptor | undefined;

/**
 * JwtService's methods, once per process: the server side is our codecs
 * (src/jwt-service/codec/), the client side proto-loader's, which loads (with protobufjs)
 * on the first client call. A server therefore starts and serves without parsing the .proto.
 */
export function jwtServiceDefinition(): ServiceDescriptor {
  if (loaded === undefined) {
    const lazy = lazyProtoService(SERVICE_NAME, JWT_SERVICE_METHOD_SHAPES, loadJwtProto);
    const service: Record<string, MethodDescriptor<unknown, unknown>> = {};
    for (const [name, method] of Object.entries(lazy))
      service[name] = { ...method, ...SERVER_CODECS[name] } as MethodDescriptor<unknown, unknown>;
    loaded = service;
  }
  return loaded;
}
