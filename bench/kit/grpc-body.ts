/**
 * A GenerateJwt request as bytes, for load generators that send a fixed body and know
 * nothing of protobuf: h2load (`-d FILE`: the gRPC length-prefixed message) and the
 * open-loop generator (`--body-hex`: the serialized message alone; grpc-go adds the
 * prefix), and for tests that write a call's body on a raw HTTP/2 stream. The benchmark's
 * request is the one ghz sends in the macro cells: `{ algorithm }` and nothing else
 * (proto/jwt.proto, GenerateJwtRequest: `string algorithm = 1`, `string subject = 2`).
 */

/** Protobuf wire type 2 (length-delimited): strings, bytes, messages. */
const LENGTH_DELIMITED = 2;

/** A protobuf base-128 varint (little-endian groups of 7 bits, high bit = more). */
export function encodeVarint(value: number): Buffer {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint of ${value}`);
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A string field `tag` serialized: its key, its length, its UTF-8 bytes. */
function stringField(tag: number, text: string): Buffer {
  const value = Buffer.from(text, 'utf8');
  return Buffer.concat([encodeVarint((tag << 3) | LENGTH_DELIMITED), encodeVarint(value.length), value]);
}

/** `GenerateJwtRequest { algorithm, subject }` serialized (fields 1 and 2, strings); no subject, no field 2. */
export function encodeGenerateJwtRequest(algorithm: string, subject?: string): Buffer {
  return subject === undefined ? stringField(1, algorithm) : Buffer.concat([stringField(1, algorithm), stringField(2, subject)]);
}

/**
 * A gRPC length-prefixed message (the gRPC over HTTP/2 protocol,
 * https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): 1 byte compressed flag
 * (1 when `compressed`), 4 bytes big-endian length, the message.
 */
export function grpcFrame(message: Buffer, compressed = false): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt8(compressed ? 1 : 0, 0);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}
