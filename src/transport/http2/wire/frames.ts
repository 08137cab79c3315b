/**
 * HTTP/2 frame types, flags, error codes and settings (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §6, §7), the few frames
 * this server builds, and the error that ends a connection. parse.ts reads frames.
 */
import { Buffer } from 'node:buffer';

export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;

export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** §7: the error codes of RST_STREAM and GOAWAY. */
export const H2_ERROR = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

export const SETTING = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** §3.4: what a client sends first. */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** §6.5.2 / §6.9.1: the protocol's defaults and bounds. */
export const DEFAULT_WINDOW_SIZE = 65_535;
export const MAX_WINDOW_SIZE = 2 ** 31 - 1;
export const MIN_MAX_FRAME_SIZE = 16_384;
export const MAX_MAX_FRAME_SIZE = 2 ** 24 - 1;
export const FRAME_HEADER_BYTES = 9;

export function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header[0] = length >>> 16;
  header[1] = (length >>> 8) & 0xff;
  header[2] = length & 0xff;
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return header;
}

export function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  return Buffer.concat([frameHeader(payload.length, type, flags, streamId), payload]);
}

export function settingsFrame(entries: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.allocUnsafe(6 * entries.length);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
}

export const SETTINGS_ACK = frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(0));

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FRAME.WINDOW_UPDATE, 0, streamId, payload);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return frame(FRAME.RST_STREAM, 0, streamId, payload);
}

export function goawayFrame(lastStreamId: number, code: number, debugData: Buffer): Buffer {
  const payload = Buffer.allocUnsafe(8 + debugData.length);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  debugData.copy(payload, 8);
  return frame(FRAME.GOAWAY, 0, 0, payload);
}

/** A protocol violation (§5.4.1): the connection ends with GOAWAY `code`. */
export class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A header block the decoder cannot take: the connection must end with COMPRESSION_ERROR
 * (§4.3). Here, below the Huffman and HPACK decoders, so that both throw it; the
 * connection turns it into a GOAWAY, and it never reaches a caller.
 */
export class HpackError extends Error {}
