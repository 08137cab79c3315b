/**
 * Hand-written protobuf encoders for JwtService's requests (proto/jwt.proto): the client's
 * side, the other direction of decode.ts.
 *
 * Why not proto-loader's: a client would load @grpc/proto-loader and protobufjs (~45
 * modules) and parse jwt.proto on its first call only to write these five small messages
 * (bench/PERFORMANCE.md, "Start-up"). Each message is a table of its fields, as in the
 * .proto (test/jwt-service/codec/encode-request.test.ts holds the tables to it and decodes
 * every output with proto-loader's own deserializer).
 *
 * A field left out (undefined or null) takes its proto3 default and is not written, as a
 * default never is. What protobufjs would coerce silently is refused, naming the message and
 * the field, with INVALID_ARGUMENT: a string field that is not a string (it would send
 * `String(value)`) or holds a lone surrogate (it has no UTF-8 form: protobufjs writes bytes
 * the server refuses, or U+FFFD, depending on the string's length), an int64 field that is
 * not an integer of the int64 range (it would truncate 1.5 to 1, and send NaN as 0: the
 * server's default), a request that is not an object, and a property the message does not have
 * (protobufjs would not read it, and the call would go out with that field's default).
 */
import { Buffer } from 'node:buffer';
import { GrpcStatusError, GrpcStatus } from '../../contracts/handler-api.js';
import type {
  ExchangeTokenRequest,
  GenerateJwtRequest,
  GetJwksRequest,
  GetStatusListRequest,
  RevokeJwtRequest,
  VerifyJwtRequest,
} from '../messages.js';
import { WIRE_LENGTH_DELIMITED, WIRE_VARINT, Writer, int64Size, stringFieldSize, tag } from './wire.js';
import { nearestName } from '../../base/nearest-name.js';
import { firstUnknownName } from '../../base/unknown-name.js';

/** One field of a request: its number (all below 16: a one-byte tag), its name in the .proto, its type. */
export type RequestField<T> = readonly [number: number, name: keyof T & string, type: 'string' | 'int64'];

/** A request message: its name in the .proto and its fields. @internal */
export interface RequestMessage<T> {
  readonly name: string;
  readonly fields: readonly RequestField<T>[];
}

/** The request messages of proto/jwt.proto, field for field. @internal */
export const REQUEST_MESSAGES = {
  GenerateJwtRequest: {
    name: 'GenerateJwtRequest',
    fields: [
      [1, 'algorithm', 'string'],
      [2, 'subject', 'string'],
      [3, 'audience', 'string'],
      [4, 'ttl_seconds', 'int64'],
      [5, 'claims_json', 'string'],
    ],
  } satisfies RequestMessage<GenerateJwtRequest>,
  VerifyJwtRequest: {
    name: 'VerifyJwtRequest',
    fields: [
      [1, 'jwt', 'string'],
      [2, 'audience', 'string'],
      [3, 'issuer', 'string'],
    ],
  } satisfies RequestMessage<VerifyJwtRequest>,
  GetJwksRequest: { name: 'GetJwksRequest', fields: [] } satisfies RequestMessage<GetJwksRequest>,
  GetStatusListRequest: { name: 'GetStatusListRequest', fields: [[1, 'uri', 'string']] } satisfies RequestMessage<GetStatusListRequest>,
  RevokeJwtRequest: {
    name: 'RevokeJwtRequest',
    fields: [
      [1, 'jwt', 'string'],
      [2, 'jti', 'string'],
      [3, 'expires_at', 'int64'],
      [4, 'reason', 'string'],
    ],
  } satisfies RequestMessage<RevokeJwtRequest>,
  ExchangeTokenRequest: {
    name: 'ExchangeTokenRequest',
    fields: [
      [1, 'subject_token', 'string'],
      [2, 'subject_token_type', 'string'],
      [3, 'actor_token', 'string'],
      [4, 'actor_token_type', 'string'],
      [5, 'audience', 'string'],
      [6, 'resource', 'string'],
      [7, 'scope', 'string'],
      [8, 'requested_token_type', 'string'],
    ],
  } satisfies RequestMessage<ExchangeTokenRequest>,
};

/** -2^63 and 2^63: an int64 field's bounds, as doubles (both exact). */
const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;

/** Present on every string in Node 20 and later (ES2024), not yet in this project's lib. */
export type WellFormed = string & { isWellFormed(): boolean };

/** The refusal of a request (`GenerateJwtRequest`) or of one field (`GenerateJwtRequest.subject`), as the client rejects the call with it. */
function refused(what: string, problem: string): GrpcStatusError {
  return new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `${what}: ${problem}`);
}

/** What a value is, for an error: a number itself, anything else its type only (a misplaced object may hold a secret). */
function shown(value: unknown): string {
  return typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value;
}

/** A field's value checked against its type: the value to write, or undefined for a default (not written). */
function checked<T>(message: string, [, name, type]: RequestField<T>, value: unknown): string | number | undefined {
  if (value === undefined || value === null) return undefined;
  if (type === 'string') {
    if (typeof value !== 'string') throw refused(`${message}.${name}`, `must be a string, got ${shown(value)}`);
    if (!(value as WellFormed).isWellFormed()) throw refused(`${message}.${name}`, 'holds a lone surrogate, which has no UTF-8 form');
    return value === '' ? undefined : value;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < INT64_MIN || value >= INT64_END)
    throw refused(`${message}.${name}`, `must be an integer of the int64 range, got ${shown(value)}`);
  return value === 0 ? undefined : value;
}

/**
 * Refuses a property the message does not have: a misspelt `ttlSeconds` or `sub` would
 * otherwise be dropped and the call made with the field's default (any subject, the
 * default lifetime), which a caller cannot see. Inherited, getter and non-enumerable
 * names count, as the encoder reads them all (src/base/unknown-name.ts).
 */
function refuseUnknownFields<T>(spec: RequestMessage<T>, request: object): void {
  const names = spec.fields.map(([, name]) => name as string);
  const key = firstUnknownName(request, names);
  if (key === undefined) return;
  const near = nearestName(key, names);
  const fields = names.length === 0 ? 'it has none' : `its fields: ${names.join(', ')}`;
  throw refused(spec.name, `has no field ${JSON.stringify(key)}${near === undefined ? '' : ` (did you mean ${near}?)`}; ${fields}`);
}

/**
 * Encodes `request` as `spec` says: every field checked first, and the bytes sized, then one
 * buffer written in field order.
 */
function encodeRequest<T>(spec: RequestMessage<T>, request: unknown): Buffer {
  if (typeof request !== 'object' || request === null) throw refused(spec.name, `must be an object, got ${shown(request)}`);
  refuseUnknownFields(spec, request);
  const values = spec.fields.map((field) => checked(spec.name, field, (request as Record<string, unknown>)[field[1]]));
  const byteLengths = values.map((value) => (typeof value === 'string' ? Buffer.byteLength(value) : 0));
  let size = 0;
  values.forEach((value, i) => {
    if (typeof value === 'string') size += stringFieldSize(byteLengths[i] as number);
    else if (value !== undefined) size += 1 + int64Size(value);
  });
  const writer = new Writer(size);
  spec.fields.forEach(([number], i) => {
    const value = values[i];
    if (typeof value === 'string') writer.string(tag(number, WIRE_LENGTH_DELIMITED), value, byteLengths[i] as number);
    else if (value !== undefined) writer.int64(tag(number, WIRE_VARINT), value);
  });
  return writer.buf;
}

/**
 * GenerateJwtRequest { string algorithm = 1; string subject = 2; string audience = 3; int64 ttl_seconds = 4; string claims_json = 5; }
 *
 * @example
 * ```ts
 * const bytes = encodeGenerateJwtRequest({ algorithm: 'ES256', subject: 'ada' }); // 0a 05 'ES256' 12 03 'ada'
 * ```
 */
export function encodeGenerateJwtRequest(request: Partial<GenerateJwtRequest>): Buffer {
  return encodeRequest(REQUEST_MESSAGES.GenerateJwtRequest, request);
}

/**
 * VerifyJwtRequest { string jwt = 1; string audience = 2; string issuer = 3; }
 *
 * @example
 * ```ts
 * // hidden: declare const token: string;
 * const bytes = encodeVerifyJwtRequest({ jwt: token, audience: 'api' });
 * ```
 */
export function encodeVerifyJwtRequest(request: Partial<VerifyJwtRequest>): Buffer {
  return encodeRequest(REQUEST_MESSAGES.VerifyJwtRequest, request);
}

/**
 * GetJwksRequest {}: no fields, so always empty.
 *
 * @example
 * ```ts
 * encodeGetJwksRequest({}).length; // 0
 * ```
 */
export function encodeGetJwksRequest(request: GetJwksRequest): Buffer {
  return encodeRequest(REQUEST_MESSAGES.GetJwksRequest, request);
}

/**
 * GetStatusListRequest { string uri = 1; }
 *
 * @example
 * ```ts
 * const bytes = encodeGetStatusListRequest({ uri: 'https://auth.example/statuslists/1' });
 * ```
 */
export function encodeGetStatusListRequest(request: Partial<GetStatusListRequest>): Buffer {
  return encodeRequest(REQUEST_MESSAGES.GetStatusListRequest, request);
}

/**
 * RevokeJwtRequest { string jwt = 1; string jti = 2; int64 expires_at = 3; string reason = 4; }
 *
 * @example
 * ```ts
 * const bytes = encodeRevokeJwtRequest({ jti: 'mB3jv0pQ7xX9cJqYg1a2Rw', expires_at: 1767225600, reason: 'laptop stolen' });
 * ```
 */
export function encodeRevokeJwtRequest(request: Partial<RevokeJwtRequest>): Buffer {
  return encodeRequest(REQUEST_MESSAGES.RevokeJwtRequest, request);
}

/**
 * ExchangeTokenRequest { string subject_token = 1; ... string requested_token_type = 8; }
 *
 * @example
 * ```ts
 * // hidden: declare const token: string;
 * const bytes = encodeExchangeTokenRequest({ subject_token: token, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', audience: 'billing' });
 * ```
 */
export function encodeExchangeTokenRequest(request: Partial<ExchangeTokenRequest>): Buffer {
  return encodeRequest(REQUEST_MESSAGES.ExchangeTokenRequest, request);
}
