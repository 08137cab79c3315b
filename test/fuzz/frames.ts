/**
 * HTTP/2 frames for the fuzzer, encoded here and not with the server's own codec: the
 * fuzzer must not share a bug with what it tests (RFC 9113 section 4 and 6).
 */
import type { Prng } from './prng.js';

export const FRAME_TYPE = {
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
export const FRAME_TYPE_NAMES: readonly string[] = Object.keys(FRAME_TYPE);
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** One frame, kept structured so the mutator can change a field and re-encode it. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** A length field that lies about the payload (set by the mutator); undefined: the true length. */
  lengthOverride?: number;
}

export function encodeFrame(frame: Frame): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE((frame.lengthOverride ?? frame.payload.length) & 0xffffff, 0, 3);
  header[3] = frame.type & 0xff;
  header[4] = frame.flags & 0xff;
  header.writeUInt32BE(frame.streamId >>> 0, 5);
  return Buffer.concat([header, frame.payload]);
}

export function settings(entries: readonly (readonly [number, number])[], ack = false): Frame {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id & 0xffff, i * 6);
    payload.writeUInt32BE(value >>> 0, i * 6 + 2);
  });
  return { type: FRAME_TYPE.SETTINGS, flags: ack ? FLAG.ACK : 0, streamId: 0, payload };
}

export function ping(data: Buffer, ack = false): Frame {
  return { type: FRAME_TYPE.PING, flags: ack ? FLAG.ACK : 0, streamId: 0, payload: data };
}

export function windowUpdate(streamId: number, increment: number): Frame {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment >>> 0);
  return { type: FRAME_TYPE.WINDOW_UPDATE, flags: 0, streamId, payload };
}

export function rstStream(streamId: number, code: number): Frame {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code >>> 0);
  return { type: FRAME_TYPE.RST_STREAM, flags: 0, streamId, payload };
}

export function data(streamId: number, payload: Buffer, endStream: boolean): Frame {
  return { type: FRAME_TYPE.DATA, flags: endStream ? FLAG.END_STREAM : 0, streamId, payload };
}

/** A header block split over HEADERS and CONTINUATION frames at the given sizes. */
export function headerFrames(streamId: number, block: Buffer, endStream: boolean, chunk: number): Frame[] {
  const size = Math.max(1, chunk);
  const frames: Frame[] = [];
  for (let offset = 0; offset === 0 || offset < block.length; offset += size) {
    const last = offset + size >= block.length;
    const type = offset === 0 ? FRAME_TYPE.HEADERS : FRAME_TYPE.CONTINUATION;
    const flags = (last ? FLAG.END_HEADERS : 0) | (offset === 0 && endStream ? FLAG.END_STREAM : 0);
    frames.push({ type, flags, streamId, payload: block.subarray(offset, offset + size) });
  }
  return frames;
}

/** Adds padding (PADDED flag, pad length, zeros) to a DATA or HEADERS frame. */
export function padded(frame: Frame, padLength: number): Frame {
  const pad = Buffer.alloc(padLength & 0xff);
  return { ...frame, flags: frame.flags | FLAG.PADDED, payload: Buffer.concat([Buffer.from([pad.length]), frame.payload, pad]) };
}

/** A frame of any type (unknown ones too) with random flags, stream and a payload of edge length. */
export function randomFrame(rng: Prng): Frame {
  const type = rng.chance(0.9) ? rng.int(10) : rng.int(256);
  const streamId = rng.pick([0, 1, 3, rng.int(64) * 2 + 1, rng.int(8) * 2, rng.edge(31), 0x8000_0001]);
  const length = rng.chance(0.8) ? rng.pick([0, 1, 4, 5, 6, 8, 9, 12, rng.int(64)]) : rng.edge(15);
  return { type, flags: rng.int(256), streamId, payload: rng.bytes(length) };
}
