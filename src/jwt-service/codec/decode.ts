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
 * misread silently, a known field with the wrong wire type, is refused here.
 */
import { GrpcStatusError, GrpcStatus } from '../../transport/handler-api.js';
import type { GenerateJwtRequest, GetJwksRequest, GetStatusListRequest, RevokeJwtRequest, VerifyJwtRequest } from '../messages.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

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

  string(): string {
    const length = this.uint32();
    const start = this.pos;
    const end = start + length;
    if (end > this.buf.length) throw new WireError('truncated length-delimited field');
    this.pos = end;
    return this.buf.toString('utf8', start, end);
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
        for (;;) {
          if (this.done) throw new WireError(`group ${field} is not closed`);
          const tag = this.uint32();
          if ((tag & 7) === WIRE_END_GROUP) {
            if (tag >>> 3 !== field) throw new WireError(`group ${field} closed by ${tag >>> 3}`);
            return;
          }
          this.skip(tag & 7, tag >>> 3);
        }
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        throw new WireError(`invalid wire type ${wireType} for field ${field}`);
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
          request.algorithm = reader.string();
          break;
        case 2:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'subject');
          request.subject = reader.string();
          break;
        case 3:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'audience');
          request.audience = reader.string();
          break;
        case 4:
          expectWireType(tag, WIRE_VARINT, 'ttl_seconds');
          request.ttl_seconds = reader.int64();
          break;
        case 5:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'claims_json');
          request.claims_json = reader.string();
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
          request.jwt = reader.string();
          break;
        case 2:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'audience');
          request.audience = reader.string();
          break;
        case 3:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'issuer');
          request.issuer = reader.string();
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
        request.uri = reader.string();
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
          request.jwt = reader.string();
          break;
        case 2:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'jti');
          request.jti = reader.string();
          break;
        case 3:
          expectWireType(tag, WIRE_VARINT, 'expires_at');
          request.expires_at = reader.int64();
          break;
        case 4:
          expectWireType(tag, WIRE_LENGTH_DELIMITED, 'reason');
          request.reason = reader.string();
          break;
        default:
          reader.skip(tag & 7, tag >>> 3);
      }
    }
    return request;
  });
}
