/**
 * Hand-written protobuf decoders for JwtService's responses (proto/jwt.proto): the
 * client's side, the other direction of encode.ts.
 *
 * Why not proto-loader's: a client would load @grpc/proto-loader and protobufjs (~45
 * modules) and parse jwt.proto on its first call only to read these five small messages
 * (bench/PERFORMANCE.md, "Start-up"). Each message is a table of its fields, as in the
 * .proto; the plain object has the shape proto-loader gives under the service's loader
 * options (src/protos/load.ts: field names as in the .proto, int64 as a Number, the enum by
 * its name, every field present with its default: '' / 0 / false / REASON_UNSPECIFIED).
 * test/jwt-service/codec/decode-response.test.ts holds the tables to the .proto and every
 * result to proto-loader's.
 *
 * Unknown fields (any wire type, groups included) are skipped: a newer server may answer
 * with fields this client does not know, and proto3 has it read the rest, as proto-loader
 * does. What the server's request decoders refuse is refused here too, naming the message
 * and the field: a truncated varint or field, a length past the end, a known field with the
 * wrong wire type, a string that is not valid UTF-8 (protobufjs would read a cut string as
 * the bytes that are there, and bad UTF-8 as U+FFFD). So is a reason this client has no
 * name for: proto-loader would hand its number where the type promises a name. The
 * refusal is a GrpcStatusError INTERNAL (the server answered something that is not the
 * message); grpc-js ends the call with it, `Response message parsing error: ...`, and the
 * client rejects with that status.
 */
import type { Buffer } from 'node:buffer';
import { GrpcStatus } from '../../contracts/handler-api.js';
import type {
  ExchangeTokenResponse,
  GenerateJwtResponse,
  GetJwksResponse,
  GetStatusListResponse,
  RevokeJwtResponse,
  VerifyJwtReason,
  VerifyJwtResponse,
} from '../messages.js';
import { REASON_NUMBERS } from './encode.js';
import { type Reader, WIRE_LENGTH_DELIMITED, WIRE_VARINT, WireError, decodeMessage, expectWireType, readTag } from './wire.js';

/** The types a response field has in proto/jwt.proto; `reason` is VerifyJwtResponse.Reason. */
type ResponseType = 'string' | 'int64' | 'bool' | 'reason';

/** One field of a response: its number, its name in the .proto, its type. */
export type ResponseField<T> = readonly [number: number, name: keyof T & string, type: ResponseType];

/** A response message: its name in the .proto and its fields, in field order. @internal */
export interface ResponseMessage<T> {
  readonly name: string;
  readonly fields: readonly ResponseField<T>[];
}

/** The response messages of proto/jwt.proto, field for field. @internal */
export const RESPONSE_MESSAGES = {
  GenerateJwtResponse: {
    name: 'GenerateJwtResponse',
    fields: [
      [1, 'jwt', 'string'],
      [2, 'sub', 'string'],
      [3, 'kid', 'string'],
      [4, 'expires_at', 'int64'],
    ],
  } satisfies ResponseMessage<GenerateJwtResponse>,
  VerifyJwtResponse: {
    name: 'VerifyJwtResponse',
    fields: [
      [1, 'valid', 'bool'],
      [2, 'sub', 'string'],
      [3, 'claims_json', 'string'],
      [4, 'reason', 'reason'],
    ],
  } satisfies ResponseMessage<VerifyJwtResponse>,
  GetJwksResponse: { name: 'GetJwksResponse', fields: [[1, 'jwks_json', 'string']] } satisfies ResponseMessage<GetJwksResponse>,
  GetStatusListResponse: {
    name: 'GetStatusListResponse',
    fields: [[1, 'token', 'string']],
  } satisfies ResponseMessage<GetStatusListResponse>,
  RevokeJwtResponse: {
    name: 'RevokeJwtResponse',
    fields: [
      [1, 'revoked', 'bool'],
      [2, 'expires_at', 'int64'],
    ],
  } satisfies ResponseMessage<RevokeJwtResponse>,
  ExchangeTokenResponse: {
    name: 'ExchangeTokenResponse',
    fields: [
      [1, 'access_token', 'string'],
      [2, 'issued_token_type', 'string'],
      [3, 'token_type', 'string'],
      [4, 'expires_in', 'int64'],
      [5, 'scope', 'string'],
    ],
  } satisfies ResponseMessage<ExchangeTokenResponse>,
};

const WIRE_TYPES: Readonly<Record<ResponseType, number>> = {
  string: WIRE_LENGTH_DELIMITED,
  int64: WIRE_VARINT,
  bool: WIRE_VARINT,
  reason: WIRE_VARINT,
};
const DEFAULTS: Readonly<Record<ResponseType, string | number | boolean>> = {
  string: '',
  int64: 0,
  bool: false,
  reason: 'REASON_UNSPECIFIED',
};

/** VerifyJwtResponse.Reason, number to name: encode.ts's table turned round. */
const REASON_NAMES: ReadonlyMap<number, VerifyJwtReason> = new Map(
  Object.entries(REASON_NUMBERS).map(([name, number]) => [number, name as VerifyJwtReason]),
);

function reasonName(number: number): VerifyJwtReason {
  const name = REASON_NAMES.get(number);
  if (name === undefined) throw new WireError(`unknown value ${number}`);
  return name;
}

/** Reads the value of known field `field`, whose tag was just read; a wire error names the field. */
function readField<T>(reader: Reader, tag: number, [number, name, type]: ResponseField<T>): unknown {
  expectWireType(tag, WIRE_TYPES[type], name);
  const label = `field ${number} (${name})`;
  try {
    switch (type) {
      case 'string':
        return reader.string(label);
      case 'int64':
        return reader.int64();
      case 'bool':
        // Any non-zero varint is true, as protobuf reads a bool.
        return reader.int64() !== 0;
      case 'reason':
        return reasonName(reader.int64());
    }
  } catch (err) {
    // "field 4 (expires_at): truncated varint"; a string's UTF-8 error names it already.
    if (err instanceof WireError && !err.message.startsWith(label)) throw new WireError(`${label}: ${err.message}`);
    throw err;
  }
}

/**
 * Decodes `buf` as `spec` says: every field starts at its default, the last value of a
 * field repeated on the wire wins (proto3 merging), unknown fields are skipped.
 */
function decodeResponse<T>(spec: ResponseMessage<T>, buf: Buffer): T {
  return decodeMessage(spec.name, GrpcStatus.INTERNAL, buf, (reader) => {
    const response: Record<string, unknown> = {};
    for (const [, name, type] of spec.fields) response[name] = DEFAULTS[type];
    while (!reader.done) {
      const tag = readTag(reader);
      const field = spec.fields.find(([number]) => number === tag >>> 3);
      if (field === undefined) reader.skip(tag & 7, tag >>> 3);
      else response[field[1]] = readField(reader, tag, field);
    }
    return response as T;
  });
}

/**
 * GenerateJwtResponse { string jwt = 1; string sub = 2; string kid = 3; int64 expires_at = 4; }
 *
 * @example
 * ```ts
 * decodeGenerateJwtResponse(Buffer.from([0x20, 0x3c])); // { jwt: '', sub: '', kid: '', expires_at: 60 }
 * ```
 */
export function decodeGenerateJwtResponse(buf: Buffer): GenerateJwtResponse {
  return decodeResponse(RESPONSE_MESSAGES.GenerateJwtResponse, buf);
}

/**
 * VerifyJwtResponse { bool valid = 1; string sub = 2; string claims_json = 3; Reason reason = 4; }
 *
 * @example
 * ```ts
 * decodeVerifyJwtResponse(Buffer.from([0x20, 0x05])); // { valid: false, sub: '', claims_json: '', reason: 'EXPIRED' }
 * ```
 */
export function decodeVerifyJwtResponse(buf: Buffer): VerifyJwtResponse {
  return decodeResponse(RESPONSE_MESSAGES.VerifyJwtResponse, buf);
}

/**
 * GetJwksResponse { string jwks_json = 1; }
 *
 * @example
 * ```ts
 * decodeGetJwksResponse(Buffer.alloc(0)); // { jwks_json: '' }
 * ```
 */
export function decodeGetJwksResponse(buf: Buffer): GetJwksResponse {
  return decodeResponse(RESPONSE_MESSAGES.GetJwksResponse, buf);
}

/**
 * GetStatusListResponse { string token = 1; }
 *
 * @example
 * ```ts
 * // hidden: declare const bytes: Buffer;
 * const { token } = decodeGetStatusListResponse(bytes);
 * ```
 */
export function decodeGetStatusListResponse(buf: Buffer): GetStatusListResponse {
  return decodeResponse(RESPONSE_MESSAGES.GetStatusListResponse, buf);
}

/**
 * RevokeJwtResponse { bool revoked = 1; int64 expires_at = 2; }
 *
 * @example
 * ```ts
 * decodeRevokeJwtResponse(Buffer.from([0x08, 0x01])); // { revoked: true, expires_at: 0 }
 * ```
 */
export function decodeRevokeJwtResponse(buf: Buffer): RevokeJwtResponse {
  return decodeResponse(RESPONSE_MESSAGES.RevokeJwtResponse, buf);
}

/**
 * ExchangeTokenResponse { string access_token = 1; string issued_token_type = 2; string token_type = 3; int64 expires_in = 4; string scope = 5; }
 *
 * @example
 * ```ts
 * // hidden: declare const bytes: Buffer;
 * const { access_token, expires_in } = decodeExchangeTokenResponse(bytes);
 * ```
 */
export function decodeExchangeTokenResponse(buf: Buffer): ExchangeTokenResponse {
  return decodeResponse(RESPONSE_MESSAGES.ExchangeTokenResponse, buf);
}
