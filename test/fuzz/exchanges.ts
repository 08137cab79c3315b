/**
 * Valid client exchanges, as frames after the preface: what a real client sends (a
 * GenerateJwt call, server- and bidi-streaming calls, pings, settings, window updates),
 * the starting point the mutator changes.
 */
import { FRAME_TYPE, type Frame, data, headerFrames, padded, ping, rstStream, settings, windowUpdate } from './frames.js';
import { METHODS, generateRequest, lengthPrefixed, randomBody } from './grpc.js';
import { grpcRequestBlock, randomBlock } from './hpack.js';
import type { Prng } from './prng.js';

export const EXCHANGE_KINDS = [
  'unary',
  'unary-continuation',
  'unary-padded',
  'server-streaming',
  'bidi-streaming',
  'many-streams',
  'pings-settings',
  'hpack-random',
] as const;
export type ExchangeKind = (typeof EXCHANGE_KINDS)[number];

function clientSettings(rng: Prng): Frame {
  const entries: [number, number][] = [];
  for (let n = rng.int(4); n > 0; n--) entries.push([1 + rng.int(6), rng.pick([0, 1, 100, 4096, 16_384, 65_535, 1 << 20])]);
  return settings(entries.filter(([id, value]) => !(id === 5 && value < 16_384) && !(id === 2 && value > 1)));
}

function unary(_rng: Prng, stream: number, chunk: number): Frame[] {
  const body = lengthPrefixed(generateRequest());
  return [...headerFrames(stream, grpcRequestBlock(METHODS.generate), false, chunk), data(stream, body, true)];
}

/** One exchange of `kind`, frames in order (the preface is the runner's). */
export function exchange(rng: Prng, kind: ExchangeKind, counts: Map<string, number>): Frame[] {
  const frames: Frame[] = [clientSettings(rng), settings([], true)];
  switch (kind) {
    case 'unary':
      frames.push(...unary(rng, 1, 1 << 14));
      break;
    case 'unary-continuation':
      frames.push(...unary(rng, 1, 1 + rng.int(20)));
      break;
    case 'unary-padded': {
      const [headers, body] = unary(rng, 1, 1 << 14) as [Frame, Frame];
      frames.push(padded(headers, rng.int(256)), padded(body, rng.int(256)));
      break;
    }
    case 'server-streaming':
      frames.push(
        ...headerFrames(1, grpcRequestBlock(METHODS.healthWatch), false, 1 << 14),
        data(1, lengthPrefixed(Buffer.alloc(0)), true),
        windowUpdate(0, 1 + rng.int(1 << 20)),
        rstStream(1, 8),
      );
      break;
    case 'bidi-streaming': {
      frames.push(...headerFrames(1, grpcRequestBlock(METHODS.reflection), false, 1 << 14));
      const listServices = lengthPrefixed(Buffer.from([0x3a, 0x01, 0x2a])); // list_services: "*"
      for (let n = 1 + rng.int(4); n > 0; n--) frames.push(data(1, listServices, false));
      frames.push(data(1, Buffer.alloc(0), true));
      break;
    }
    case 'many-streams':
      for (let stream = 1; stream < 2 + 2 * rng.int(20); stream += 2) {
        frames.push(...unary(rng, stream, 1 << 14));
        if (rng.chance(0.3)) frames.push(rstStream(stream, rng.int(14)));
      }
      break;
    case 'pings-settings':
      for (let n = 1 + rng.int(8); n > 0; n--) frames.push(rng.chance(0.5) ? ping(rng.bytes(8)) : clientSettings(rng));
      frames.push(...unary(rng, 1, 1 << 14));
      break;
    case 'hpack-random': {
      const block = randomBlock(rng, rng.pick(Object.values(METHODS)), counts);
      const body = randomBody(rng);
      counts.set(`grpc:${body.kind}`, (counts.get(`grpc:${body.kind}`) ?? 0) + 1);
      frames.push(...headerFrames(1, block, false, 1 + rng.int(1 << 14)), data(1, body.bytes, true));
      break;
    }
  }
  if (rng.chance(0.2)) frames.push({ type: FRAME_TYPE.GOAWAY, flags: 0, streamId: 0, payload: Buffer.alloc(8) });
  return frames;
}
