/**
 * Hand-written protobuf encoders for JwtService's responses (proto/jwt.proto).
 *
 * Why not proto-loader's: its serializer copies the plain object into a protobufjs
 * message (`fromObject`), then encodes through a Writer that queues one operation per
 * field and allocates the buffer at `finish()`. These size the message, allocate once
 * and write. proto3 defaults (empty strings, 0, false) are omitted, as the protobuf
 * encoding guide's canonical form does (https://protobuf.dev/programming-guides/encoding/); test/jwt-service/codec.test.ts decodes every output with
 * proto-loader's own deserializer.
 */
import { Buffer } from 'node:buffer';
import type {
  ExchangeTokenResponse,
  GenerateJwtResponse,
  GetJwksResponse,
  GetStatusListResponse,
  RevokeJwtResponse,
  VerifyJwtReason,
  VerifyJwtResponse,
} from '../messages.js';
import { internalError } from '../../base/assert.js';
import { Writer, int64Size, stringFieldSize, tag, uint32Size } from './wire.js';

/**
 * VerifyJwtResponse.Reason, name to number, as in proto/jwt.proto (checked against it in
 * the tests); a reason added to the union without a number here does not compile.
 */
export const REASON_NUMBERS = {
  REASON_UNSPECIFIED: 0,
  MALFORMED: 1,
  BAD_SIGNATURE: 2,
  ALGORITHM_NOT_ALLOWED: 3,
  UNKNOWN_KEY: 4,
  EXPIRED: 5,
  NOT_YET_VALID: 6,
  AUDIENCE_MISMATCH: 7,
  ISSUER_MISMATCH: 8,
  UNSUPPORTED_HEADER: 9,
  REVOKED: 10,
} as const satisfies Readonly<Record<VerifyJwtReason, number>>;

/** GenerateJwtResponse { string jwt = 1; string sub = 2; string kid = 3; int64 expires_at = 4; } */
export function encodeGenerateJwtResponse(response: GenerateJwtResponse): Buffer {
  const jwtBytes = Buffer.byteLength(response.jwt);
  const subBytes = Buffer.byteLength(response.sub);
  const kidBytes = Buffer.byteLength(response.kid);
  const size =
    stringFieldSize(jwtBytes) +
    stringFieldSize(subBytes) +
    stringFieldSize(kidBytes) +
    (response.expires_at === 0 ? 0 : 1 + int64Size(response.expires_at));
  const writer = new Writer(size);
  writer.string(tag(1, 2), response.jwt, jwtBytes);
  writer.string(tag(2, 2), response.sub, subBytes);
  writer.string(tag(3, 2), response.kid, kidBytes);
  writer.int64(tag(4, 0), response.expires_at);
  return writer.buf;
}

/** VerifyJwtResponse { bool valid = 1; string sub = 2; string claims_json = 3; Reason reason = 4; } */
export function encodeVerifyJwtResponse(response: VerifyJwtResponse): Buffer {
  // Looked up as a string: a caller outside TypeScript could hand any value.
  const reason = (REASON_NUMBERS as Readonly<Record<string, number | undefined>>)[response.reason];
  if (reason === undefined) throw internalError(`VerifyJwtResponse.reason: unknown value ${JSON.stringify(response.reason)}`);
  const subBytes = Buffer.byteLength(response.sub);
  const claimsBytes = Buffer.byteLength(response.claims_json);
  const size =
    (response.valid ? 2 : 0) + stringFieldSize(subBytes) + stringFieldSize(claimsBytes) + (reason === 0 ? 0 : 1 + uint32Size(reason));
  const writer = new Writer(size);
  writer.small(tag(1, 0), response.valid ? 1 : 0);
  writer.string(tag(2, 2), response.sub, subBytes);
  writer.string(tag(3, 2), response.claims_json, claimsBytes);
  writer.small(tag(4, 0), reason);
  return writer.buf;
}

/** GetJwksResponse { string jwks_json = 1; } */
export function encodeGetJwksResponse(response: GetJwksResponse): Buffer {
  const bytes = Buffer.byteLength(response.jwks_json);
  const writer = new Writer(stringFieldSize(bytes));
  writer.string(tag(1, 2), response.jwks_json, bytes);
  return writer.buf;
}

/** GetStatusListResponse { string token = 1; } */
export function encodeGetStatusListResponse(response: GetStatusListResponse): Buffer {
  const bytes = Buffer.byteLength(response.token);
  const writer = new Writer(stringFieldSize(bytes));
  writer.string(tag(1, 2), response.token, bytes);
  return writer.buf;
}

/** RevokeJwtResponse { bool revoked = 1; int64 expires_at = 2; } */
export function encodeRevokeJwtResponse(response: RevokeJwtResponse): Buffer {
  const size = (response.revoked ? 2 : 0) + (response.expires_at === 0 ? 0 : 1 + int64Size(response.expires_at));
  const writer = new Writer(size);
  writer.small(tag(1, 0), response.revoked ? 1 : 0);
  writer.int64(tag(2, 0), response.expires_at);
  return writer.buf;
}

/** ExchangeTokenResponse { string access_token = 1; string issued_token_type = 2; string token_type = 3; int64 expires_in = 4; string scope = 5; } */
export function encodeExchangeTokenResponse(response: ExchangeTokenResponse): Buffer {
  const tokenBytes = Buffer.byteLength(response.access_token);
  const typeBytes = Buffer.byteLength(response.issued_token_type);
  const tokenTypeBytes = Buffer.byteLength(response.token_type);
  const scopeBytes = Buffer.byteLength(response.scope);
  const size =
    stringFieldSize(tokenBytes) +
    stringFieldSize(typeBytes) +
    stringFieldSize(tokenTypeBytes) +
    (response.expires_in === 0 ? 0 : 1 + int64Size(response.expires_in)) +
    stringFieldSize(scopeBytes);
  const writer = new Writer(size);
  writer.string(tag(1, 2), response.access_token, tokenBytes);
  writer.string(tag(2, 2), response.issued_token_type, typeBytes);
  writer.string(tag(3, 2), response.token_type, tokenTypeBytes);
  writer.int64(tag(4, 0), response.expires_in);
  writer.string(tag(5, 2), response.scope, scopeBytes);
  return writer.buf;
}
