/** One fuzz input from a seed: a valid exchange, mutated, or random frames; encoded after the preface. */
import { EXCHANGE_KINDS, exchange } from './exchanges.js';
import { FRAME_TYPE_NAMES, PREFACE, type Frame, encodeFrame, randomFrame, settings } from './frames.js';
import { mutate } from './mutate.js';
import type { Prng } from './prng.js';

/** The seed of exchange `index` of a run: any single exchange replays from (run seed, index). */
export function exchangeSeed(runSeed: number, index: number): number {
  return (Math.imul(runSeed >>> 0, 0x9e3779b1) + Math.imul(index + 1, 0x85ebca6b)) >>> 0;
}

export interface Input {
  readonly bytes: Buffer;
  readonly kind: string;
  readonly mutations: string[];
  readonly frames: Frame[];
}

/** Counts by key, for the run's report. */
export type Counts = Map<string, number>;

export function count(counts: Counts, key: string, n = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + n);
}

export function generate(rng: Prng, counts: Counts): Input {
  let kind: string;
  let frames: Frame[];
  if (rng.chance(0.15)) {
    kind = 'random-frames';
    frames = [settings([])];
    for (let n = 1 + rng.int(30); n > 0; n--) frames.push(randomFrame(rng));
  } else {
    kind = rng.pick(EXCHANGE_KINDS);
    frames = exchange(rng, kind as (typeof EXCHANGE_KINDS)[number], counts);
  }
  const mutations = kind === 'random-frames' || rng.chance(0.1) ? [] : mutate(rng, frames, 4);
  let preface = PREFACE;
  if (rng.chance(0.02)) {
    preface = Buffer.from(preface);
    const at = rng.int(preface.length);
    preface[at] = (preface[at] ?? 0) ^ (1 << rng.int(8));
    mutations.push('preface');
  }
  count(counts, `exchange:${kind}`);
  for (const name of mutations) count(counts, `mutation:${name}`);
  for (const frame of frames) count(counts, `frame:${FRAME_TYPE_NAMES[frame.type] ?? 'UNKNOWN'}`);
  return { bytes: Buffer.concat([preface, ...frames.map(encodeFrame)]), kind, mutations, frames };
}
