/**
 * Structure-aware mutations of an exchange: a field of a frame (type, flags, stream,
 * length, payload bytes), the frame sequence (drop, duplicate, swap, insert, interleave
 * into a header block), or the bytes as written (truncation).
 */
import { FRAME_TYPE, type Frame, data, randomFrame, settings, windowUpdate } from './frames.js';
import { randomBody } from './grpc.js';
import { randomField } from './hpack.js';
import type { Prng } from './prng.js';

type Mutation = (rng: Prng, frames: Frame[]) => void;

function target(rng: Prng, frames: Frame[]): Frame | undefined {
  return frames.length === 0 ? undefined : frames[rng.int(frames.length)];
}

const MUTATIONS: Record<string, Mutation> = {
  'flip-bits': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame === undefined || frame.payload.length === 0) return;
    frame.payload = Buffer.from(frame.payload);
    for (let n = 1 + rng.int(4); n > 0; n--) {
      const i = rng.int(frame.payload.length);
      frame.payload[i] = (frame.payload[i] ?? 0) ^ (1 << rng.int(8));
    }
  },
  'set-byte': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame === undefined || frame.payload.length === 0) return;
    frame.payload = Buffer.from(frame.payload);
    frame.payload[rng.int(frame.payload.length)] = rng.pick([0x00, 0x7f, 0x80, 0xff, rng.int(256)]);
  },
  'truncate-payload': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) frame.payload = frame.payload.subarray(0, rng.int(frame.payload.length + 1));
  },
  'extend-payload': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) frame.payload = Buffer.concat([frame.payload, rng.bytes(1 + rng.int(32))]);
  },
  'length-lie': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) frame.lengthOverride = rng.pick([frame.payload.length - 1, frame.payload.length + 1, rng.edge(24)]) & 0xffffff;
  },
  'change-type': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) frame.type = rng.chance(0.8) ? rng.int(10) : rng.int(256);
  },
  'change-flags': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) frame.flags ^= 1 << rng.int(8);
  },
  'change-stream': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined)
      frame.streamId = rng.pick([
        0,
        frame.streamId + 2,
        frame.streamId - 2,
        frame.streamId + 1,
        rng.edge(31),
        0x8000_0000 | frame.streamId,
      ]);
  },
  'drop-frame': (rng, frames) => {
    if (frames.length > 0) frames.splice(rng.int(frames.length), 1);
  },
  'duplicate-frame': (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) frames.splice(rng.int(frames.length + 1), 0, { ...frame });
  },
  'swap-frames': (rng, frames) => {
    const i = rng.int(frames.length);
    const j = rng.int(frames.length);
    const a = frames[i];
    const b = frames[j];
    if (a !== undefined && b !== undefined) [frames[i], frames[j]] = [b, a];
  },
  'insert-random-frame': (rng, frames) => {
    frames.splice(rng.int(frames.length + 1), 0, randomFrame(rng));
  },
  'interleave-header-block': (rng, frames) => {
    const i = frames.findIndex((frame) => frame.type === FRAME_TYPE.HEADERS);
    if (i >= 0)
      frames.splice(
        i + 1,
        0,
        rng.chance(0.5)
          ? randomFrame(rng)
          : { type: FRAME_TYPE.CONTINUATION, flags: rng.int(256), streamId: rng.int(8), payload: randomField(rng).bytes },
      );
  },
  'hpack-field': (rng, frames) => {
    const frame = frames.find((candidate) => candidate.type === FRAME_TYPE.HEADERS || candidate.type === FRAME_TYPE.CONTINUATION);
    if (frame !== undefined) frame.payload = Buffer.concat([frame.payload, randomField(rng).bytes]);
  },
  'grpc-body': (rng, frames) => {
    const frame = frames.find((candidate) => candidate.type === FRAME_TYPE.DATA);
    if (frame !== undefined) frame.payload = randomBody(rng).bytes;
  },
  // Flow control (RFC 9113 section 6.9): windows pushed past 2^31-1, DATA past the window, a shrunk initial window.
  'window-overflow': (rng, frames) => {
    const stream = rng.pick([0, 1]);
    frames.splice(rng.int(frames.length + 1), 0, windowUpdate(stream, 0x7fff_ffff), windowUpdate(stream, 1 + rng.int(0x7fff_ffff)));
  },
  'data-past-window': (rng, frames) => {
    for (let n = 5 + rng.int(4); n > 0; n--) frames.push(data(1, Buffer.alloc(16_384), false));
  },
  'initial-window': (rng, frames) => {
    frames.splice(rng.int(frames.length + 1), 0, settings([[4, rng.pick([0, 1, 0x7fff_ffff, 0x8000_0000])]]));
  },
  flood: (rng, frames) => {
    const frame = target(rng, frames);
    if (frame !== undefined) for (let n = rng.int(200); n > 0; n--) frames.push({ ...frame });
  },
};

export const MUTATION_KINDS: readonly string[] = Object.keys(MUTATIONS);

/** Applies 0 to `max` random mutations in place; returns the names of those applied. */
export function mutate(rng: Prng, frames: Frame[], max: number): string[] {
  const applied: string[] = [];
  for (let n = rng.int(max + 1); n > 0; n--) {
    const name = rng.pick(MUTATION_KINDS);
    MUTATIONS[name]?.(rng, frames);
    applied.push(name);
  }
  return applied;
}
