import type { Buffer } from 'node:buffer';
import type { ServiceDescriptor } from '../contracts/handler-api.js';
import { SERVICE_NAME, jwtServiceDefinition } from '../jwt-service/definition.js';
import type {
  ExchangeTokenRequest,
  ExchangeTokenResponse,
  GenerateJwtRequest,
  GenerateJwtResponse,
  GetJwksRequest,
  GetJwksResponse,
  GetStatusListRequest,
  GetStatusListResponse,
  RevokeJwtRequest,
  RevokeJwtResponse,
  VerifyJwtRequest,
  VerifyJwtResponse,
} from '../jwt-service/messages.js';
import { internalError } from '../base/assert.js';

/** One unary method as a client calls it: path and the client side of its codecs. */
export interface ClientMethod<Req, Res> {
  readonly path: string;
  readonly serialize: (request: Req) => Buffer;
  readonly deserialize: (bytes: Buffer) => Res;
}

export interface JwtServiceMethods {
  readonly GenerateJwt: ClientMethod<Partial<GenerateJwtRequest>, GenerateJwtResponse>;
  readonly VerifyJwt: ClientMethod<Partial<VerifyJwtRequest>, VerifyJwtResponse>;
  readonly GetJwks: ClientMethod<GetJwksRequest, GetJwksResponse>;
  readonly GetStatusList: ClientMethod<Partial<GetStatusListRequest>, GetStatusListResponse>;
  readonly RevokeJwt: ClientMethod<Partial<RevokeJwtRequest>, RevokeJwtResponse>;
  readonly ExchangeToken: ClientMethod<Partial<ExchangeTokenRequest>, ExchangeTokenResponse>;
}

let methods: JwtServiceMethods | undefined;

function clientMethod<Req, Res>(service: ServiceDescriptor, name: string): ClientMethod<Req, Res> {
  const method = service[name];
  if (method?.requestSerialize === undefined || method.responseDeserialize === undefined) {
    throw internalError(`${SERVICE_NAME}.${name} has no client-side codecs`);
  }
  return { path: method.path, serialize: method.requestSerialize, deserialize: method.responseDeserialize };
}

/**
 * JwtService's methods as a client calls them: the service's one definition
 * (src/jwt-service/definition.ts), whose codecs on both sides are this package's own
 * (src/jwt-service/codec/: encode-request.ts and decode-response.ts on this side), giving
 * the message shapes proto-loader gives under the service's loader options. So a client
 * loads neither @grpc/proto-loader nor protobufjs and parses no .proto.
 */
export function jwtServiceMethods(): JwtServiceMethods {
  if (methods === undefined) {
    const service = jwtServiceDefinition();
    methods = {
      GenerateJwt: clientMethod(service, 'GenerateJwt'),
      VerifyJwt: clientMethod(service, 'VerifyJwt'),
      GetJwks: clientMethod(service, 'GetJwks'),
      GetStatusList: clientMethod(service, 'GetStatusList'),
      RevokeJwt: clientMethod(service, 'RevokeJwt'),
      ExchangeToken: clientMethod(service, 'ExchangeToken'),
    };
  }
  return methods;
}
