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
import type {
  GenerateJwtResponse,
  GetJwksResponse,
  GetStatusListResponse,
  RevokeJwtResponse,
  VerifyJwtReason,
  VerifyJwtResponse,
} from '../messages.js';
import { internalError } from '../../assert.js';

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

/** Bytes of a varint holding a non-negative 32-bit value (tags, lengths). */
function uint32Size(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5;
}

/** Bytes of an int64 varint: 10 for any negative value (two's complement), else 1 per 7 bits. */
function int64Size(value: number): number {
  if (value < 0) return 10;
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** A length-delimited field of one-byte tag: tag, length varint, UTF-8 bytes. */
function stringFieldSize(byteLength: number): number {
  return byteLength === 0 ? 0 : 1 + uint32Size(byteLength) + byteLength;
}

/**
 * Buffer's own UTF-8 writer without `write()`'s argument juggling (about a third of the
 * encoder's time). Present on every Node Buffer, though not in @types/node.
 */
type Utf8Writable = Buffer & { utf8Write(value: string, offset: number, length: number): number };

/** Writes the message's fields in order into one buffer of exactly `size` bytes. */
class Writer {
  readonly buf: Utf8Writable;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size) as Utf8Writable;
  }

  private uint32(value: number): void {
    while (value >= 0x80) {
      this.buf[this.pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buf[this.pos++] = value;
  }

  /** Field `tag` (one byte: field < 16) holding `value` of `byteLength` UTF-8 bytes; skipped when empty. */
  string(tag: number, value: string, byteLength: number): void {
    if (byteLength === 0) return;
    this.buf[this.pos++] = tag;
    this.uint32(byteLength);
    this.pos += this.buf.utf8Write(value, this.pos, byteLength);
  }

  /** Varint field `tag` holding an int64 `value`; skipped when 0. */
  int64(tag: number, value: number): void {
    if (value === 0) return;
    this.buf[this.pos++] = tag;
    if (value >= 0 && value <= 0xffffffff) {
      this.uint32(value);
      return;
    }
    // Two's complement in 64 bits, 7 bits at a time, from (lo, hi).
    let lo = value >>> 0;
    let hi = Math.floor(value / 0x1_0000_0000) >>> 0;
    if (value < 0) {
      lo = (~(-value >>> 0) + 1) >>> 0;
      hi = (~Math.floor(-value / 0x1_0000_0000) + (lo === 0 ? 1 : 0)) >>> 0;
    }
    while (hi !== 0 || lo >= 0x80) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    this.buf[this.pos++] = lo;
  }

  /** Varint field `tag` holding a small non-negative value (bool, enum); skipped when 0. */
  small(tag: number, value: number): void {
    if (value === 0) return;
    this.buf[this.pos++] = tag;
    this.uint32(value);
  }
}

/** Tag byte of field `field` with wire type `wireType`. */
const tag = (field: number, wireType: number): number => (field << 3) | wireType;

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
