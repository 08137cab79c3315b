/**
 * Hand-written protobuf decoders for JwtService's requests (proto/jwt.proto).
 *
 * Why not proto-loader's: its deserializer decodes into a protobufjs message and then
 * converts that into a second, plain object (`toObject` with defaults); for three- to
 * five-field messages of strings that is most of the work. These read the wire format
 * straight into the plain object, with the shape proto-loader produces under the
 * service's loader options (keepCase, longs as Number, defaults filled in), and are
 * checked against proto-loader's in test/jwt-service/codec.test.ts.
 *
 * Wire rules kept: fields in any order, a repeated scalar field's last value wins,
 * unknown fields (any wire type, groups included) are skipped. What protobufjs would
 * misread silently, a known field with the wrong wire type, is refused here; so are a
 * string field that is not valid UTF-8 (proto3 requires it; decoding would replace the
 * bad bytes with U+FFFD and the service would sign the result) and unknown groups nested
 * deeper than 100 (wire.ts, `MAX_GROUP_DEPTH`).
 */
import type { Buffer } from 'node:buffer';
import { GrpcStatus } from '../../contracts/handler-api.js';
import type {
  ExchangeTokenRequest,
  GenerateJwtRequest,
  GetJwksRequest,
  GetStatusListRequest,
  RevokeJwtRequest,
  VerifyJwtRequest,
} from '../messages.js';
import { type Reader, WIRE_LENGTH_DELIMITED, WIRE_VARINT, decodeMessage, expectWireType, readTag } from './wire.js';

/** A request decoder: a wire error is the caller's INVALID_ARGUMENT, naming the message. */
function guarded<T>(message: string, buf: Buffer, decode: (reader: Reader) => T): T {
  return decodeMessage(message, GrpcStatus.INVALID_ARGUMENT, buf, decode);
}

/** GenerateJwtRequest { string algorithm = 1; string subject = 2; string audience = 3; int64 ttl_seconds = 4; string claims_json = 5; } */
export function decodeGenerateJwtRequest(buf: Buffer): GenerateJwtRequest {
  return guarded('GenerateJwtRequest', buf, (reader) => {
    const request: GenerateJwtRequest = { algorithm: '', subject: '', audience: '', ttl_seconds: 0, claims_json: '' };
    while (!reader.done) {
      const tag = readTag(reader);
      switch (tag >>> 3) {
        case 1:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'algorithm');
          request.algorithm = reader.string('algorithm');
          break;
        case 2:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'subject');
          request.subject = reader.string('subject');
          break;
        case 3:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'audience');
          request.audience = reader.string('audience');
          break;
        case 4:
          expectWireType(tag, WIRE_VARINT, 'ttl_seconds');
          request.ttl_seconds = reader.int64();
          break;
        case 5:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'claims_json');
          request.claims_json = reader.string('claims_json');
          break;
        default:
          reader.skip(tag & 7, tag >>> 3);
      }
    }
    return request;
  });
}

/** VerifyJwtRequest { string jwt = 1; string audience = 2; string issuer = 3; } */
export function decodeVerifyJwtRequest(buf: Buffer): VerifyJwtRequest {
  return guarded('VerifyJwtRequest', buf, (reader) => {
    const request: VerifyJwtRequest = { jwt: '', audience: '', issuer: '' };
    while (!reader.done) {
      const tag = readTag(reader);
      switch (tag >>> 3) {
        case 1:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'jwt');
          request.jwt = reader.string('jwt');
          break;
        case 2:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'audience');
          request.audience = reader.string('audience');
          break;
        case 3:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'issuer');
          request.issuer = reader.string('issuer');
          break;
        default:
          reader.skip(tag & 7, tag >>> 3);
      }
    }
    return request;
  });
}

/** GetJwksRequest {}: every field is unknown and skipped. */
export function decodeGetJwksRequest(buf: Buffer): GetJwksRequest {
  return guarded('GetJwksRequest', buf, (reader) => {
    while (!reader.done) {
      const tag = readTag(reader);
      reader.skip(tag & 7, tag >>> 3);
    }
    return {};
  });
}

/** GetStatusListRequest { string uri = 1; } */
export function decodeGetStatusListRequest(buf: Buffer): GetStatusListRequest {
  return guarded('GetStatusListRequest', buf, (reader) => {
    const request: GetStatusListRequest = { uri: '' };
    while (!reader.done) {
      const tag = readTag(reader);
      if (tag >>> 3 === 1) {
        expectWireType(tag, WIRE_LENGTH_DELIMITED, 'uri');
        request.uri = reader.string('uri');
      } else reader.skip(tag & 7, tag >>> 3);
    }
    return request;
  });
}

/** RevokeJwtRequest { string jwt = 1; string jti = 2; int64 expires_at = 3; string reason = 4; } */
export function decodeRevokeJwtRequest(buf: Buffer): RevokeJwtRequest {
  return guarded('RevokeJwtRequest', buf, (reader) => {
    const request: RevokeJwtRequest = { jwt: '', jti: '', expires_at: 0, reason: '' };
    while (!reader.done) {
      const tag = readTag(reader);
      switch (tag >>> 3) {
        case 1:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'jwt');
          request.jwt = reader.string('jwt');
          break;
        case 2:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'jti');
          request.jti = reader.string('jti');
          break;
        case 3:
          expectWireType(tag, WIRE_VARINT, 'expires_at');
          request.expires_at = reader.int64();
          break;
        case 4:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'reason');
          request.reason = reader.string('reason');
          break;
        default:
          reader.skip(tag & 7, tag >>> 3);
      }
    }
    return request;
  });
}

/** ExchangeTokenRequest's string fields, by number (proto/jwt.proto): every field is a string. */
const EXCHANGE_FIELDS = [
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'audience',
  'resource',
  'scope',
  'requested_token_type',
] as const satisfies readonly (keyof ExchangeTokenRequest)[];

/** ExchangeTokenRequest { string subject_token = 1; ... string requested_token_type = 8; }: eight strings. */
export function decodeExchangeTokenRequest(buf: Buffer): ExchangeTokenRequest {
  return guarded('ExchangeTokenRequest', buf, (reader) => {
    const request: ExchangeTokenRequest = {
      subject_token: '',
      subject_token_type: '',
      actor_token: '',
      actor_token_type: '',
      audience: '',
      resource: '',
      scope: '',
      requested_token_type: '',
    };
    while (!reader.done) {
      const tag = readTag(reader);
      const name = EXCHANGE_FIELDS[(tag >>> 3) - 1];
      if (name === undefined) {
        reader.skip(tag & 7, tag >>> 3);
        continue;
      }
      expectWireType(tag, WIRE_LENGTH_DELIMITED, name);
      request[name] = reader.string(name);
    }
    return request;
  });
}
