/**
 * One HTTP/2 connection (RFC 9113) framed in JavaScript on a node:net socket: the
 * preface, SETTINGS, PING, WINDOW_UPDATE in both directions, RST_STREAM, GOAWAY, and
 * request streams of HEADERS (+ DATA) answered by one write of HEADERS, DATA and trailers.
 *
 * A measurement instrument, not a server to deploy: no TLS, no CONTINUATION frames, no
 * stream limit beyond the advertised one, no timeouts or keepalive. It exists to measure
 * what a gRPC call costs when node:http2 (nghttp2, its Http2Stream Duplex, the header
 * object conversions) is not in the way; see bench/PERFORMANCE.md.
 */
import type { Socket } from 'node:net';
import { HpackDecoder, HpackError } from '../../../src/transport/http2/wire/hpack.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
const ERROR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, FLOW_CONTROL_ERROR: 3, FRAME_SIZE_ERROR: 6, COMPRESSION_ERROR: 9 } as const;

/** What this side advertises, and the windows it keeps open. */
export const LIMITS = {
  maxConcurrentStreams: 1000,
  /** Per stream: requests up to this size need no stream WINDOW_UPDATE. */
  initialWindowSize: 1 << 20,
  maxHeaderListSize: 16 << 10,
  /** Connection receive window, topped up when half is used. */
  connectionWindow: 16 << 20,
  maxFrameSize: 16384,
} as const;

/** A request stream once its END_STREAM arrived: headers and the whole body. */
export type RequestListener = (connection: H2Connection, streamId: number, headers: Record<string, string>, body: Buffer) => void;

interface Stream {
  readonly headers: Record<string, string>;
  readonly chunks: Buffer[];
  received: number;
  sendWindow: number;
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const header = Buffer.allocUnsafe(9);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return header;
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  return Buffer.concat([frameHeader(payload.length, type, flags, streamId), payload]);
}

function settingsPayload(entries: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.allocUnsafe(6 * entries.length);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return payload;
}

function windowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FRAME.WINDOW_UPDATE, 0, streamId, payload);
}

const SERVER_PREFACE = Buffer.concat([
  frame(FRAME.SETTINGS, 0, 0, settingsPayload([[3, LIMITS.maxConcurrentStreams], [4, LIMITS.initialWindowSize], [6, LIMITS.maxHeaderListSize]])),
  windowUpdate(0, LIMITS.connectionWindow - 65535),
]);
const SETTINGS_ACK = frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(0));

export class H2Connection {
  readonly #socket: Socket;
  readonly #onRequest: RequestListener;
  readonly #hpack = new HpackDecoder();
  readonly #streams = new Map<number, Stream>();
  /** Responses waiting for send window: [streamId, header block, message, trailer block]. */
  readonly #blocked: [number, Buffer, Buffer, Buffer][] = [];
  #pending: Buffer = Buffer.alloc(0);
  #prefaceSeen = false;
  #lastStreamId = 0;
  #received = 0;
  #sendWindow = 65535;
  #peerInitialWindow = 65535;
  #peerMaxFrameSize = 16384;
  readonly #out: Buffer[] = [];
  #inDataEvent = false;
  #flushScheduled = false;
  #closed = false;

  constructor(socket: Socket, onRequest: RequestListener) {
    this.#socket = socket;
    this.#onRequest = onRequest;
    socket.setNoDelay(true);
    socket.write(SERVER_PREFACE);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.#closed = true;
      this.#streams.clear();
    });
  }

  /** Answers a stream with HEADERS, one message and OK trailers; a stream already reset is skipped. */
  respond(streamId: number, headerBlock: Buffer, message: Buffer, trailerBlock: Buffer): void {
    const stream = this.#streams.get(streamId);
    if (stream === undefined || this.#closed) return;
    const length = 5 + message.length;
    if (this.#blocked.length > 0 || length > this.#sendWindow || length > stream.sendWindow) {
      this.#blocked.push([streamId, headerBlock, message, trailerBlock]);
      return;
    }
    this.#send(streamId, stream, headerBlock, message, trailerBlock);
  }

  /** A Trailers-Only response (one HEADERS frame with END_STREAM). */
  respondTrailersOnly(streamId: number, block: Buffer): void {
    if (!this.#streams.delete(streamId) || this.#closed) return;
    this.#queue(frameHeader(block.length, FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, streamId), block);
  }

  #send(streamId: number, stream: Stream, headerBlock: Buffer, message: Buffer, trailerBlock: Buffer): void {
    this.#streams.delete(streamId);
    const length = 5 + message.length;
    this.#sendWindow -= length;
    stream.sendWindow -= length;
    const prefix = Buffer.allocUnsafe(5);
    prefix[0] = 0;
    prefix.writeUInt32BE(message.length, 1);
    this.#queue(frameHeader(headerBlock.length, FRAME.HEADERS, FLAG.END_HEADERS, streamId), headerBlock);
    if (length <= this.#peerMaxFrameSize) this.#queue(frameHeader(length, FRAME.DATA, 0, streamId), prefix, message);
    else {
      // DATA frames no larger than the peer's SETTINGS_MAX_FRAME_SIZE.
      const whole = Buffer.concat([prefix, message]);
      for (let offset = 0; offset < whole.length; offset += this.#peerMaxFrameSize) {
        const chunk = whole.subarray(offset, offset + this.#peerMaxFrameSize);
        this.#queue(frameHeader(chunk.length, FRAME.DATA, 0, streamId), chunk);
      }
    }
    this.#queue(frameHeader(trailerBlock.length, FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, streamId), trailerBlock);
  }

  #queue(...buffers: Buffer[]): void {
    this.#out.push(...buffers);
    if (!this.#inDataEvent && !this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  /** Everything answered during one read goes out in one write. */
  #flush(): void {
    this.#flushScheduled = false;
    if (this.#out.length === 0 || this.#closed) return;
    this.#socket.write(this.#out.length === 1 ? (this.#out[0] as Buffer) : Buffer.concat(this.#out));
    this.#out.length = 0;
  }

  #goAway(code: number): void {
    const payload = Buffer.allocUnsafe(8);
    payload.writeUInt32BE(this.#lastStreamId, 0);
    payload.writeUInt32BE(code, 4);
    this.#out.push(frame(FRAME.GOAWAY, 0, 0, payload));
    this.#flush();
    this.#closed = true;
    this.#socket.end();
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    const buffer = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    let offset = 0;
    if (!this.#prefaceSeen) {
      if (buffer.length < PREFACE.length) {
        this.#pending = buffer;
        return;
      }
      if (!buffer.subarray(0, PREFACE.length).equals(PREFACE)) {
        this.#socket.destroy();
        return;
      }
      this.#prefaceSeen = true;
      offset = PREFACE.length;
    }
    this.#inDataEvent = true;
    try {
      while (buffer.length - offset >= 9 && !this.#closed) {
        const length = buffer.readUIntBE(offset, 3);
        if (length > LIMITS.maxFrameSize) return this.#goAway(ERROR.FRAME_SIZE_ERROR);
        if (buffer.length - offset < 9 + length) break;
        this.#onFrame(buffer, buffer[offset + 3] as number, buffer[offset + 4] as number, buffer.readUInt32BE(offset + 5) & 0x7fffffff, offset + 9, offset + 9 + length);
        offset += 9 + length;
      }
    } finally {
      this.#inDataEvent = false;
    }
    // Keep only the unread tail, copied, so the socket's chunk can be collected.
    this.#pending = offset === buffer.length ? Buffer.alloc(0) : Buffer.from(buffer.subarray(offset));
    if (this.#received >= LIMITS.connectionWindow / 2) {
      this.#out.push(windowUpdate(0, this.#received));
      this.#received = 0;
    }
    this.#flush();
  }

  #onFrame(buffer: Buffer, type: number, flags: number, streamId: number, start: number, end: number): void {
    switch (type) {
      case FRAME.DATA:
        return this.#onDataFrame(buffer, flags, streamId, start, end);
      case FRAME.HEADERS:
        return this.#onHeaders(buffer, flags, streamId, start, end);
      case FRAME.RST_STREAM:
        this.#streams.delete(streamId);
        return;
      case FRAME.SETTINGS:
        if (flags & FLAG.ACK) return;
        return this.#onSettings(buffer, start, end);
      case FRAME.PING:
        if ((flags & FLAG.ACK) === 0) this.#out.push(frame(FRAME.PING, FLAG.ACK, 0, buffer.subarray(start, end)));
        return;
      case FRAME.GOAWAY:
        this.#closed = true;
        this.#socket.end();
        return;
      case FRAME.WINDOW_UPDATE:
        return this.#onWindowUpdate(buffer.readUInt32BE(start) & 0x7fffffff, streamId);
      case FRAME.PUSH_PROMISE:
      case FRAME.CONTINUATION:
        return this.#goAway(ERROR.PROTOCOL_ERROR);
      default:
        return; // PRIORITY and unknown types are ignored (RFC 9113 §5.5).
    }
  }

  #onHeaders(buffer: Buffer, flags: number, streamId: number, start: number, end: number): void {
    if ((flags & FLAG.END_HEADERS) === 0) return this.#goAway(ERROR.PROTOCOL_ERROR); // CONTINUATION: not in the probe
    if (streamId % 2 === 0 || streamId <= this.#lastStreamId) return this.#goAway(ERROR.PROTOCOL_ERROR);
    this.#lastStreamId = streamId;
    if (flags & FLAG.PADDED) end -= buffer[start++] as number;
    if (flags & FLAG.PRIORITY) start += 5;
    const fields: string[] = [];
    try {
      if (this.#hpack.decode(buffer, start, end, fields, LIMITS.maxHeaderListSize) > LIMITS.maxHeaderListSize) return this.#goAway(ERROR.COMPRESSION_ERROR);
    } catch (err) {
      if (err instanceof HpackError) return this.#goAway(ERROR.COMPRESSION_ERROR);
      throw err;
    }
    const headers: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) headers[fields[i] as string] = fields[i + 1] as string;
    const stream: Stream = { headers, chunks: [], received: 0, sendWindow: this.#peerInitialWindow };
    this.#streams.set(streamId, stream);
    if (flags & FLAG.END_STREAM) this.#onRequest(this, streamId, headers, Buffer.alloc(0));
  }

  #onDataFrame(buffer: Buffer, flags: number, streamId: number, start: number, end: number): void {
    this.#received += end - start;
    if (flags & FLAG.PADDED) end -= buffer[start++] as number;
    const stream = this.#streams.get(streamId);
    if (stream === undefined) return; // reset or answered already: flow control counted above
    stream.received += end - start;
    if (stream.received > LIMITS.initialWindowSize) return this.#goAway(ERROR.FLOW_CONTROL_ERROR);
    const payload = buffer.subarray(start, end);
    if ((flags & FLAG.END_STREAM) === 0) {
      // Kept past this read: a copy, so the socket's whole read buffer is not retained.
      stream.chunks.push(Buffer.from(payload));
      return;
    }
    stream.chunks.push(payload);
    this.#onRequest(this, streamId, stream.headers, stream.chunks.length === 1 ? payload : Buffer.concat(stream.chunks));
  }

  #onSettings(buffer: Buffer, start: number, end: number): void {
    for (let at = start; at + 6 <= end; at += 6) {
      const id = buffer.readUInt16BE(at);
      const value = buffer.readUInt32BE(at + 2);
      if (id === 4) {
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const stream of this.#streams.values()) stream.sendWindow += delta;
      } else if (id === 5) this.#peerMaxFrameSize = value;
    }
    this.#out.push(SETTINGS_ACK);
    this.#unblock();
  }

  #onWindowUpdate(increment: number, streamId: number): void {
    if (streamId === 0) this.#sendWindow += increment;
    else {
      const stream = this.#streams.get(streamId);
      if (stream !== undefined) stream.sendWindow += increment;
    }
    this.#unblock();
  }

  /** Sends blocked responses, in order, while the windows allow. */
  #unblock(): void {
    while (this.#blocked.length > 0) {
      const [streamId, headerBlock, message, trailerBlock] = this.#blocked[0] as [number, Buffer, Buffer, Buffer];
      const stream = this.#streams.get(streamId);
      if (stream !== undefined) {
        const length = 5 + message.length;
        if (length > this.#sendWindow || length > stream.sendWindow) return;
        this.#send(streamId, stream, headerBlock, message, trailerBlock);
      }
      this.#blocked.shift();
    }
  }
}
