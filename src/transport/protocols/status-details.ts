/**
 * An error's typed details for the Connect protocol: a handler attaches them as gRPC does,
 * a `google.rpc.Status` in the `grpc-status-details-bin` trailer (gRPC's richer error model,
 * https://grpc.io/docs/guides/error/), and a Connect error lists them in its JSON
 * (https://connectrpc.com/docs/protocol/#error-end-stream): each detail's message type and
 * its protobuf bytes, base64. Read here with a few lines of the protobuf wire format
 * (https://protobuf.dev/programming-guides/encoding/) rather than a protobuf library, so that
 * an error never loads one.
 */
import { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../../base/errors.js';
import { CallMetadata } from '../../contracts/handler-api.js';
import { STATUS_DETAILS_KEY } from '../http2/metadata.js';

/** One entry of a Connect error's `details`: the message's full name and its bytes, base64 without padding. */
export interface ConnectErrorDetail {
  readonly type: string;
  readonly value: string;
}

function malformed(problem: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_ARGUMENT', `${STATUS_DETAILS_KEY} is not a google.rpc.Status: ${problem}`);
}

/** A cursor over protobuf bytes; a read past the end throws ERR_INVALID_ARGUMENT. */
class WireReader {
  #at = 0;
  constructor(readonly bytes: Buffer) {}

  get done(): boolean {
    return this.#at >= this.bytes.length;
  }

  varint(): number {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      const byte = this.bytes[this.#at++];
      if (byte === undefined) throw malformed('truncated varint');
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw malformed('varint longer than 10 bytes');
  }

  take(length: number): Buffer {
    if (this.#at + length > this.bytes.length) throw malformed('truncated field');
    const out = this.bytes.subarray(this.#at, this.#at + length);
    this.#at += length;
    return out;
  }

  /** Skips a field of `wireType` that is not read. */
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.take(8);
    else if (wireType === 2) this.take(this.varint());
    else if (wireType === 5) this.take(4);
    else throw malformed(`unsupported wire type ${wireType}`);
  }
}

/** The length-delimited fields `number` of a message, in order. */
function bytesFields(message: Buffer, number: number): Buffer[] {
  const reader = new WireReader(message);
  const out: Buffer[] = [];
  while (!reader.done) {
    const tag = reader.varint();
    const wireType = tag % 8;
    if (Math.floor(tag / 8) === number && wireType === 2) out.push(reader.take(reader.varint()));
    else reader.skip(wireType);
  }
  return out;
}

/** A google.protobuf.Any as a Connect detail: the type URL's last segment names the message. */
function detailOf(any: Buffer): ConnectErrorDetail {
  const typeUrl = bytesFields(any, 1).at(-1)?.toString('utf8') ?? '';
  const value = bytesFields(any, 2).at(-1) ?? Buffer.alloc(0);
  return { type: typeUrl.slice(typeUrl.lastIndexOf('/') + 1), value: value.toString('base64').replace(/=+$/, '') };
}

/**
 * Splits `trailers` into the error details their `grpc-status-details-bin` carries and the
 * rest, which Connect sends as metadata. A value that is not a google.rpc.Status gives no
 * details, as a gRPC client would find none in it.
 *
 * @example
 * ```ts
 * // hidden: declare const trailers: CallMetadata;
 * const { details, metadata } = splitStatusDetails(trailers); // details: [{ type: 'google.rpc.ErrorInfo', value: 'CgNi...' }]
 * ```
 */
export function splitStatusDetails(trailers: CallMetadata | undefined): {
  details: ConnectErrorDetail[];
  metadata: CallMetadata | undefined;
} {
  const status = trailers?.get(STATUS_DETAILS_KEY);
  if (trailers === undefined || status === undefined) return { details: [], metadata: trailers };
  const metadata = new CallMetadata();
  for (const [name, values] of trailers.entries()) if (name !== STATUS_DETAILS_KEY) for (const value of values) metadata.add(name, value);
  let details: ConnectErrorDetail[] = [];
  try {
    details = bytesFields(Buffer.from(status), 3).map(detailOf);
  } catch {
    details = [];
  }
  return { details, metadata: metadata.size > 0 ? metadata : undefined };
}
