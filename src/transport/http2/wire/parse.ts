/**
 * Reading frames (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §4.1, §6): the frame header, padding, and each type's payload
 * checked for what makes it malformed, apart from what the connection does with it (as
 * hyperium/h2's `frame/` or x/net/http2's `frameParsers`). Nothing here allocates: every
 * frame of a connection is read into the one `FrameFields` the connection owns.
 */
import type { Buffer } from 'node:buffer';
import {
  ConnectionError,
  FLAG,
  FRAME_HEADER_BYTES,
  H2_ERROR,
  MAX_MAX_FRAME_SIZE,
  MAX_WINDOW_SIZE,
  MIN_MAX_FRAME_SIZE,
  SETTING,
} from './frames.js';
import { MAX_SETTINGS_ENTRIES } from './limits.js';

/** One frame as read; `start` and `end` bound its payload (without padding or priority, once read). */
export class FrameFields {
  type = 0;
  flags = 0;
  streamId = 0;
  start = 0;
  end = 0;
}

/** A SETTINGS frame's values; -1 for those it does not carry. Reused for every SETTINGS frame. */
export class SettingsFields {
  headerTableSize = -1;
  initialWindowSize = -1;
  maxFrameSize = -1;
}

/**
 * Reads the frame header at `offset` into `into`: false when the whole frame is not in
 * `buffer` yet. This server advertises no SETTINGS_MAX_FRAME_SIZE, so 16 KiB is the limit.
 */
export function readFrame(buffer: Buffer, offset: number, into: FrameFields): boolean {
  if (buffer.length - offset < FRAME_HEADER_BYTES) return false;
  const length = (buffer[offset] as number) * 65536 + (buffer[offset + 1] as number) * 256 + (buffer[offset + 2] as number);
  if (length > MIN_MAX_FRAME_SIZE)
    throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, `frame of ${length} bytes exceeds SETTINGS_MAX_FRAME_SIZE`);
  const end = offset + FRAME_HEADER_BYTES + length;
  if (buffer.length < end) return false;
  into.type = buffer[offset + 3] as number;
  into.flags = buffer[offset + 4] as number;
  into.streamId = buffer.readUInt32BE(offset + 5) & 0x7fffffff;
  into.start = offset + FRAME_HEADER_BYTES;
  into.end = end;
  return true;
}

/** §6.1, §6.2: drops the padding of a PADDED frame. */
function unpad(buffer: Buffer, f: FrameFields): void {
  if ((f.flags & FLAG.PADDED) === 0) return;
  if (f.end - f.start < 1) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'padded frame without a pad length');
  const pad = buffer[f.start] as number;
  if (pad >= f.end - f.start) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'padding as long as the frame');
  f.start += 1;
  f.end -= pad;
}

/** §6.1. Before unpadding, `f.end - f.start` is what counts against flow control: read it first. */
export function readData(buffer: Buffer, f: FrameFields): void {
  if (f.streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on stream 0');
  unpad(buffer, f);
}

/** §6.2: leaves the header block fragment in `f`; true when the stream depends on itself (§5.3.1, a stream error). */
export function readHeaders(buffer: Buffer, f: FrameFields): boolean {
  if (f.streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS on stream 0');
  unpad(buffer, f);
  if ((f.flags & FLAG.PRIORITY) === 0) return false;
  if (f.end - f.start < 5) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'HEADERS too short for its priority');
  const selfDependent = (buffer.readUInt32BE(f.start) & 0x7fffffff) === f.streamId;
  f.start += 5;
  return selfDependent;
}

/** §6.3: 0, or the code of the stream error it is (a wrong length, a stream depending on itself). */
export function readPriority(buffer: Buffer, f: FrameFields): number {
  if (f.streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PRIORITY on stream 0');
  if (f.end - f.start !== 5) return H2_ERROR.FRAME_SIZE_ERROR;
  if ((buffer.readUInt32BE(f.start) & 0x7fffffff) === f.streamId) return H2_ERROR.PROTOCOL_ERROR;
  return 0;
}

/** §6.4: the error code. */
export function readRstStream(buffer: Buffer, f: FrameFields): number {
  if (f.end - f.start !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length');
  if (f.streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
  return buffer.readUInt32BE(f.start);
}

/** §6.5: false for an ack; else the values it sets, checked against §6.5.2's bounds, in `into`. */
export function readSettings(buffer: Buffer, f: FrameFields, into: SettingsFields): boolean {
  if (f.streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS on a stream');
  const length = f.end - f.start;
  if (f.flags & FLAG.ACK) {
    if (length !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'SETTINGS ack with a payload');
    return false;
  }
  if (length % 6 !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'SETTINGS payload not a multiple of 6');
  if (length / 6 > MAX_SETTINGS_ENTRIES)
    throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, `SETTINGS of more than ${MAX_SETTINGS_ENTRIES} entries`);
  into.headerTableSize = -1;
  into.initialWindowSize = -1;
  into.maxFrameSize = -1;
  for (let at = f.start; at < f.end; at += 6) {
    const value = buffer.readUInt32BE(at + 2);
    switch (buffer.readUInt16BE(at)) {
      case SETTING.HEADER_TABLE_SIZE:
        // RFC 7541 (https://www.rfc-editor.org/rfc/rfc7541) §4.2: the smallest size set is the one the encoder must signal.
        if (into.headerTableSize < 0 || value < into.headerTableSize) into.headerTableSize = value;
        break;
      case SETTING.ENABLE_PUSH:
        if (value > 1) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH other than 0 or 1');
        break;
      case SETTING.INITIAL_WINDOW_SIZE:
        if (value > MAX_WINDOW_SIZE) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE above 2^31 - 1');
        into.initialWindowSize = value;
        break;
      case SETTING.MAX_FRAME_SIZE:
        if (value < MIN_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE)
          throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
        into.maxFrameSize = value;
        break;
      default:
      // MAX_CONCURRENT_STREAMS: this server opens none. MAX_HEADER_LIST_SIZE: advisory. Unknown: ignored (§6.5.2).
    }
  }
  return true;
}

/** §6.7: leaves the 8 bytes of opaque data in `f`. */
export function readPing(f: FrameFields): void {
  if (f.end - f.start !== 8) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'PING of the wrong length');
  if (f.streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PING on a stream');
}

/** §6.8: the error code. */
export function readGoaway(buffer: Buffer, f: FrameFields): number {
  if (f.streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'GOAWAY on a stream');
  if (f.end - f.start < 8) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'GOAWAY too short');
  return buffer.readUInt32BE(f.start + 4);
}

/** §6.9: the increment (0 is an error the connection decides on, by stream). */
export function readWindowUpdate(buffer: Buffer, f: FrameFields): number {
  if (f.end - f.start !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length');
  return buffer.readUInt32BE(f.start) & 0x7fffffff;
}
