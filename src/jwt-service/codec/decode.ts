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
 * deeper than {@link MAX_GROUP_DEPTH}.
 */
import { isUtf8 } from 'node:buffer';
import { GrpcStatusError, GrpcStatus } from '../../transport/handler-api.js';
import type { GenerateJwtRequest, GetJwksRequest, GetStatusListRequest, RevokeJwtRequest, VerifyJwtRequest } from '../messages.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

/**
 * Deepest nesting of (unknown) groups a request may carry: protoc's default recursion
 * limit, and protobufjs's. Skipping is iterative, so this bounds the stack of open
 * groups, not the call stack; no request of ours has a group at all.
 */
const MAX_GROUP_DEPTH = 100;

/** Thrown inside a decoder, turned into INVALID_ARGUMENT at its edge. */
class WireError extends Error {}

/** A cursor over one message's bytes. */
class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  /** A varint of at most 32 significant bits (tags, lengths); longer ones are refused. */
  uint32(): number {
    const buf = this.buf;
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= buf.length) throw new WireError('truncated varint');
      const byte = buf[this.pos++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) {
        if (value > 0xffffffff) throw new WireError('varint exceeds 32 bits');
        return value;
      }
    }
    throw new WireError('varint exceeds 32 bits');
  }

  /**
   * An int64 varint as a Number, two's complement for negative values, as protobufjs
   * does with `longs: Number` (beyond 2^53 it loses precision; the bounds refuse those).
   */
  int64(): number {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) throw new WireError('truncated varint');
      const byte = buf[this.pos++] as number;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (byte < 0x80) {
        if (hi >>> 31) {
          // Negative: -(two's complement).
          const negLo = (~lo + 1) >>> 0;
          const negHi = (~hi + (negLo === 0 ? 1 : 0)) >>> 0;
          return -(negLo + negHi * 0x1_0000_0000);
        }
        return (lo >>> 0) + (hi >>> 0) * 0x1_0000_0000;
      }
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** A string field, `name` for the error if its bytes are not valid UTF-8. */
  string(name: string): string {
    const length = this.uint32();
    const start = this.pos;
    const end = start + length;
    if (end > this.buf.length) throw new WireError('truncated length-delimited field');
    this.pos = end;
    const text = this.buf.toString('utf8', start, end);
    // Decoding turns every invalid sequence into U+FFFD, so only a string holding one can
    // be invalid: the bytes are checked then, not on every call (a U+FFFD sent as its own
    // three bytes is valid).
    if (text.includes('\ufffd') && !isUtf8(this.buf.subarray(start, end))) throw new WireError(`${name} is not valid UTF-8`);
    return text;
  }

  /** Skips one field of `wireType` whose tag was just read. */
  skip(wireType: number, field: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.int64();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_LENGTH_DELIMITED:
        this.advance(this.uint32());
        return;
      case WIRE_START_GROUP:
        this.skipGroup(field);
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        throw new WireError(`invalid wire type ${wireType} for field ${field}`);
    }
  }

  /**
   * Skips group `field` whose start tag was just read, up to its end tag. Iterative, with
   * the open groups on a stack of at most {@link MAX_GROUP_DEPTH}: recursion would let
   * 20,000 nested groups (40 KB) overflow the call stack.
   */
  private skipGroup(field: number): void {
    const open = [field];
    while (open.length > 0) {
      const innermost = open[open.length - 1] as number;
      if (this.done) throw new WireError(`group ${innermost} is not closed`);
      const tag = this.uint32();
      const wireType = tag & 7;
      if (wireType === WIRE_END_GROUP) {
        if (tag >>> 3 !== innermost) throw new WireError(`group ${innermost} closed by ${tag >>> 3}`);
        open.pop();
      } else if (wireType === WIRE_START_GROUP) {
        if (open.length >= MAX_GROUP_DEPTH) throw new WireError(`groups nested deeper than ${MAX_GROUP_DEPTH}`);
        open.push(tag >>> 3);
      } else this.skip(wireType, tag >>> 3);
    }
  }

  private advance(bytes: number): void {
    if (this.pos + bytes > this.buf.length) throw new WireError('truncated field');
    this.pos += bytes;
  }
}

/** Reads the next tag; a field number of 0 is never valid. */
function readTag(reader: Reader): number {
  const tag = reader.uint32();
  if (tag >>> 3 === 0) throw new WireError('field number 0');
  return tag;
}

function expectWireType(tag: number, wireType: number, name: string): void {
  if ((tag & 7) !== wireType) throw new WireError(`field ${tag >>> 3} (${name}) has wire type ${tag & 7}, expected ${wireType}`);
}

/**
 * Runs a decoder, turning a wire error into INVALID_ARGUMENT naming the message and the
 * problem: both transports answer a deserializer's GrpcStatusError with its status.
 */
function guarded<T>(message: string, buf: Buffer, decode: (reader: Reader) => T): T {
  try {
    return decode(new Reader(buf));
  } catch (err) {
    if (err instanceof WireError) throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `${message}: ${err.message}`);
    throw err;
  }
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
