/**
 * gRPC's Length-Prefixed-Message (protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md)): a 1-byte compressed flag, a 4-byte
 * big-endian length, then the message. DATA frame boundaries say nothing about message
 * boundaries, so the reader accepts any chunking.
 */
import { Buffer } from 'node:buffer';
import { GrpcStatusError, GrpcStatus } from '../../contracts/handler-api.js';

const PREFIX_BYTES = 5;

/** Receives each complete message: its compressed flag and bytes (a view, not a copy, when it came in one chunk). */
export interface MessageSink {
  onMessage(compressed: boolean, bytes: Buffer): void;
}

/**
 * Splits a request's DATA chunks into messages. The size limit is checked on the prefix,
 * before any of the message is buffered: an oversized message is refused unread.
 */
export class MessageReader {
  readonly #maxBytes: number;
  /** The prefix while it straddles chunks. */
  #prefix: Buffer | undefined;
  #prefixFilled = 0;
  /** The body of the current message while it straddles chunks. */
  #body: Buffer | undefined;
  #bodyFilled = 0;
  #compressed = false;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** True when a message has begun and not ended: end of stream now means a truncated message. */
  get partial(): boolean {
    return this.#prefixFilled > 0 || this.#body !== undefined;
  }

  /**
   * Feeds one chunk; calls `sink.onMessage` for every message it completes. Throws GrpcStatusError
   * RESOURCE_EXHAUSTED for a message over the limit, or INTERNAL for a bad flag; after a
   * throw the reader must not be fed again.
   */
  push(chunk: Buffer, sink: MessageSink): void {
    let offset = 0;
    const end = chunk.length;
    while (offset < end) {
      if (this.#body !== undefined) {
        // Continue a message that began in an earlier chunk.
        const body = this.#body;
        const take = Math.min(body.length - this.#bodyFilled, end - offset);
        chunk.copy(body, this.#bodyFilled, offset, offset + take);
        this.#bodyFilled += take;
        offset += take;
        if (this.#bodyFilled === body.length) {
          this.#body = undefined;
          sink.onMessage(this.#compressed, body);
        }
        continue;
      }
      let flag: number;
      let length: number;
      if (this.#prefixFilled === 0 && end - offset >= PREFIX_BYTES) {
        // The common case: the whole prefix is in this chunk.
        flag = chunk[offset] as number;
        length = chunk.readUInt32BE(offset + 1);
        offset += PREFIX_BYTES;
      } else {
        const prefix = (this.#prefix ??= Buffer.allocUnsafe(PREFIX_BYTES));
        const take = Math.min(PREFIX_BYTES - this.#prefixFilled, end - offset);
        chunk.copy(prefix, this.#prefixFilled, offset, offset + take);
        this.#prefixFilled += take;
        offset += take;
        if (this.#prefixFilled < PREFIX_BYTES) return;
        this.#prefixFilled = 0;
        flag = prefix[0] as number;
        length = prefix.readUInt32BE(1);
      }
      if (flag > 1) throw new GrpcStatusError(GrpcStatus.INTERNAL, `invalid compressed flag ${flag} in a request message prefix`);
      if (length > this.#maxBytes) {
        throw new GrpcStatusError(
          GrpcStatus.RESOURCE_EXHAUSTED,
          `request message of ${length} bytes exceeds the limit of ${this.#maxBytes} bytes (maxReceiveMessageBytes)`,
        );
      }
      if (end - offset >= length) {
        // Whole message in this chunk: hand out a view, no copy.
        const bytes = chunk.subarray(offset, offset + length);
        offset += length;
        sink.onMessage(flag === 1, bytes);
      } else {
        this.#compressed = flag === 1;
        this.#body = Buffer.allocUnsafe(length);
        this.#bodyFilled = 0;
      }
    }
  }
}

/**
 * Frames one response message. Small messages are copied behind their prefix so that the
 * response is a single write; large ones are written as prefix and body (see call.ts).
 */
export function messagePrefix(compressed: boolean, length: number): Buffer {
  const prefix = Buffer.allocUnsafe(PREFIX_BYTES);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(length, 1);
  return prefix;
}

/** Messages up to this size are copied into one framed buffer (a copy is cheaper than a second write). */
export const SINGLE_BUFFER_MAX_BYTES = 16 * 1024;

/** One buffer holding prefix and message. */
export function framedMessage(compressed: boolean, bytes: Buffer): Buffer {
  const framed = Buffer.allocUnsafe(PREFIX_BYTES + bytes.length);
  framed[0] = compressed ? 1 : 0;
  framed.writeUInt32BE(bytes.length, 1);
  bytes.copy(framed, PREFIX_BYTES);
  return framed;
}
