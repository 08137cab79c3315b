import type { Buffer } from 'node:buffer';
import type { MethodDescriptor, ServiceDescriptor } from '../contracts/handler-api.js';
import { DEFAULT_MAX_AGE_SECONDS } from '../discovery/defaults.js';
import {
  decodeExchangeTokenRequest,
  decodeGenerateJwtRequest,
  decodeGetJwksRequest,
  decodeGetStatusListRequest,
  decodeRevokeJwtRequest,
  decodeVerifyJwtRequest,
} from './codec/decode.js';
import {
  decodeExchangeTokenResponse,
  decodeGenerateJwtResponse,
  decodeGetJwksResponse,
  decodeGetStatusListResponse,
  decodeRevokeJwtResponse,
  decodeVerifyJwtResponse,
} from './codec/decode-response.js';
import {
  encodeExchangeTokenResponse,
  encodeGenerateJwtResponse,
  encodeGetJwksResponse,
  encodeGetStatusListResponse,
  encodeRevokeJwtResponse,
  encodeVerifyJwtResponse,
} from './codec/encode.js';
import {
  encodeExchangeTokenRequest,
  encodeGenerateJwtRequest,
  encodeGetJwksRequest,
  encodeGetStatusListRequest,
  encodeRevokeJwtRequest,
  encodeVerifyJwtRequest,
} from './codec/encode-request.js';
import { JWT_SERVICE_JSON } from './codec/json.js';

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

/** Each method's codecs, both sides (src/jwt-service/codec/): a server's (requests in, responses out) and a client's (requests out, responses in). */
interface Codecs {
  readonly requestDeserialize: (buf: Buffer) => unknown;
  readonly responseSerialize: (value: never) => Buffer;
  readonly requestSerialize: (value: never) => Buffer;
  readonly responseDeserialize: (buf: Buffer) => unknown;
}

const CODECS: Readonly<Record<string, Codecs>> = {
  GenerateJwt: {
    requestDeserialize: decodeGenerateJwtRequest,
    responseSerialize: encodeGenerateJwtResponse,
    requestSerialize: encodeGenerateJwtRequest,
    responseDeserialize: decodeGenerateJwtResponse,
  },
  VerifyJwt: {
    requestDeserialize: decodeVerifyJwtRequest,
    responseSerialize: encodeVerifyJwtResponse,
    requestSerialize: encodeVerifyJwtRequest,
    responseDeserialize: decodeVerifyJwtResponse,
  },
  GetJwks: {
    requestDeserialize: decodeGetJwksRequest,
    responseSerialize: encodeGetJwksResponse,
    requestSerialize: encodeGetJwksRequest,
    responseDeserialize: decodeGetJwksResponse,
  },
  GetStatusList: {
    requestDeserialize: decodeGetStatusListRequest,
    responseSerialize: encodeGetStatusListResponse,
    requestSerialize: encodeGetStatusListRequest,
    responseDeserialize: decodeGetStatusListResponse,
  },
  RevokeJwt: {
    requestDeserialize: decodeRevokeJwtRequest,
    responseSerialize: encodeRevokeJwtResponse,
    requestSerialize: encodeRevokeJwtRequest,
    responseDeserialize: decodeRevokeJwtResponse,
  },
  ExchangeToken: {
    requestDeserialize: decodeExchangeTokenRequest,
    responseSerialize: encodeExchangeTokenResponse,
    requestSerialize: encodeExchangeTokenRequest,
    responseDeserialize: decodeExchangeTokenResponse,
  },
};

/**
 * The methods proto/jwt.proto marks `idempotency_level = NO_SIDE_EFFECTS` (they only read
 * the public keys and the public status lists): the Connect protocol serves them by GET
 * too, with this Cache-Control. The JWK Set as the discovery port serves it (its default
 * max-age, DEFAULT_MAX_AGE_SECONDS); a status list revalidated on every use (its ETag
 * makes that a 304), since a revocation must show within the list's own ttl.
 */
const NO_SIDE_EFFECTS: Readonly<Record<string, string>> = {
  GetJwks: `public, max-age=${DEFAULT_MAX_AGE_SECONDS}`,
  GetStatusList: 'no-cache',
};

/** The path of JwtService's method `name`: `/jwt.services.JwtService/GenerateJwt`. */
function methodPath(name: string): string {
  return `/${SERVICE_NAME}/${name}`;
}

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
export const JWT_SERVICE_METHODS: readonly string[] = Object.freeze(Object.keys(CODECS).map(methodPath));

/** Every JwtService method is unary (proto/jwt.proto; a test holds the two together). @internal */
export const JWT_SERVICE_METHOD_SHAPES = Object.fromEntries(
  Object.keys(CODECS).map((name) => [name, { requestStream: false, responseStream: false }]),
);

let defined: ServiceDescriptor | undefined;

/**
 * JwtService's methods, built once per process, with this package's codecs on both sides
 * (src/jwt-service/codec/): neither a server nor a client of it loads proto-loader or
 * parses the .proto. test/server/lazy-protos.test.ts holds the table to proto/jwt.proto.
 */
export function jwtServiceDefinition(): ServiceDescriptor {
  defined ??= Object.fromEntries(
    Object.entries(CODECS).map(([name, codecs]) => [
      name,
      {
        path: methodPath(name),
        ...JWT_SERVICE_METHOD_SHAPES[name],
        ...codecs,
        requestFromJson: JWT_SERVICE_JSON[name]?.request,
        responseToJson: JWT_SERVICE_JSON[name]?.response,
        ...(NO_SIDE_EFFECTS[name] !== undefined && { noSideEffects: true, cacheControl: NO_SIDE_EFFECTS[name] }),
      } as MethodDescriptor<unknown, unknown>,
    ]),
  );
  return defined;
}
