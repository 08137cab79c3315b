/**
 * The protobuf wire format as JwtService's codecs read and write it (proto/jwt.proto):
 * a {@link Reader} for the decoders, a {@link Writer} and its size helpers for the
 * encoders. The server's side (decode.ts, encode.ts) and the client's (decode-response.ts,
 * encode-request.ts) share them; what each side makes of a {@link WireError} is its own.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { GrpcStatusError, type StatusCode } from '../../contracts/handler-api.js';

export const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

/**
 * Deepest nesting of (unknown) groups a request may carry: protoc's default recursion
 * limit, and protobufjs's. Skipping is iterative, so this bounds the stack of open
 * groups, not the call stack; no request of ours has a group at all.
 */
const MAX_GROUP_DEPTH = 100;

/** Thrown inside a decoder; each decoder turns it, at its edge, into its side's status (INVALID_ARGUMENT for a request, INTERNAL for a response). */
export class WireError extends Error {}

/** A cursor over one message's bytes. */
export class Reader {
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

/**
 * Runs a decoder over `buf`, turning a wire error into a GrpcStatusError of `status`
 * naming `message` and the problem: INVALID_ARGUMENT for a request a server reads, INTERNAL
 * for a response a client reads (both transports and grpc-js answer a deserializer's
 * GrpcStatusError with its status).
 *
 * @example
 * ```ts
 * decodeMessage('GetJwksRequest', GrpcStatus.INVALID_ARGUMENT, Buffer.from([0x0a]), (reader) => reader.uint32()); // throws: GetJwksRequest: truncated varint
 * ```
 */
export function decodeMessage<T>(message: string, status: StatusCode, buf: Buffer, decode: (reader: Reader) => T): T {
  try {
    return decode(new Reader(buf));
  } catch (err) {
    if (err instanceof WireError) throw new GrpcStatusError(status, `${message}: ${err.message}`);
    throw err;
  }
}

/** Reads the next tag; a field number of 0 is never valid. */
export function readTag(reader: Reader): number {
  const tag = reader.uint32();
  if (tag >>> 3 === 0) throw new WireError('field number 0');
  return tag;
}

export function expectWireType(tag: number, wireType: number, name: string): void {
  if ((tag & 7) !== wireType) throw new WireError(`field ${tag >>> 3} (${name}) has wire type ${tag & 7}, expected ${wireType}`);
}

/** Bytes of a varint holding a non-negative 32-bit value (tags, lengths). */
export function uint32Size(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5;
}

/** Bytes of an int64 varint: 10 for any negative value (two's complement), else 1 per 7 bits. */
export function int64Size(value: number): number {
  if (value < 0) return 10;
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** A length-delimited field of one-byte tag: tag, length varint, UTF-8 bytes. */
export function stringFieldSize(byteLength: number): number {
  return byteLength === 0 ? 0 : 1 + uint32Size(byteLength) + byteLength;
}

/**
 * Buffer's own UTF-8 writer without `write()`'s argument juggling (about a third of the
 * encoder's time). Present on every Node Buffer, though not in @types/node.
 */
type Utf8Writable = Buffer & { utf8Write(value: string, offset: number, length: number): number };

/** Writes the message's fields in order into one buffer of exactly `size` bytes. */
export class Writer {
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
export const tag = (field: number, wireType: number): number => (field << 3) | wireType;
