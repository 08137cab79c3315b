/**
 * HPACK header blocks for the fuzzer (RFC 7541): every representation (indexed, literal
 * with, without and never indexing, by static or dynamic index or new name), dynamic table
 * size updates, and strings raw or Huffman-coded, well formed or not.
 */
import type { Prng } from './prng.js';

/** RFC 7541 section 5.1: an integer on an N-bit prefix, the prefix's high bits given in `first`. */
export function hpackInt(value: number, prefixBits: number, first: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const out = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

/**
 * The ten symbols with 5-bit codes (RFC 7541 Appendix B: '0' is 00000 ... 't' is 01001),
 * enough to build valid Huffman strings without copying the whole table.
 */
const HUFFMAN_5BIT = '012aceiost';

/** `text` Huffman-coded (only HUFFMAN_5BIT symbols), padded with `padBits` ones (valid: < 8). */
export function huffman5(text: string, padBits?: number): Buffer {
  let bits = '';
  for (const ch of text) bits += HUFFMAN_5BIT.indexOf(ch).toString(2).padStart(5, '0');
  const pad = padBits ?? (8 - (bits.length % 8)) % 8;
  bits += '1'.repeat(pad);
  while (bits.length % 8 !== 0) bits += '1';
  const out = Buffer.alloc(bits.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2);
  return out;
}

export function hpackString(value: Buffer, huffmanFlag = false): Buffer {
  return Buffer.concat([hpackInt(value.length, 7, huffmanFlag ? 0x80 : 0), value]);
}

export function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(Buffer.from(name)), hpackString(Buffer.from(value))]);
}

/** The request fields of a gRPC call to `path`, as a block (static-table indices where they exist). */
export function grpcRequestBlock(path: string, extra: readonly (readonly [string, string])[] = []): Buffer {
  return Buffer.concat([
    Buffer.from([0x83, 0x86]), // :method POST, :scheme http
    Buffer.concat([hpackInt(4, 4, 0x00), hpackString(Buffer.from(path))]), // :path, name from the static table
    Buffer.concat([hpackInt(1, 6, 0x40), hpackString(Buffer.from('127.0.0.1'))]), // :authority, indexed into the table
    Buffer.concat([hpackInt(31, 6, 0x40), hpackString(Buffer.from('application/grpc'))]),
    literal('te', 'trailers'),
    ...extra.map(([name, value]) => literal(name, value)),
  ]);
}

/** Representation kinds the generator draws from; counted by the runner's report. */
export const HPACK_KINDS = [
  'indexed',
  'literal-incremental',
  'literal-plain',
  'literal-never',
  'size-update',
  'huffman-valid',
  'huffman-garbage',
  'huffman-bad-padding',
  'huge-int',
  'bad-index',
] as const;
export type HpackKind = (typeof HPACK_KINDS)[number];

function name(rng: Prng): string {
  return rng.pick([
    'x-a',
    'grpc-timeout',
    'grpc-encoding',
    'authorization',
    'content-type',
    'te',
    ':path',
    ':method',
    'X-Upper',
    '',
    'x'.repeat(rng.int(300)),
  ]);
}

/** One random representation, and its kind. */
export function randomField(rng: Prng): { kind: HpackKind; bytes: Buffer } {
  const kind = rng.pick(HPACK_KINDS);
  const value = (): Buffer => Buffer.from(rng.pick(['trailers', 'identity', 'gzip', '1S', 'x'.repeat(rng.int(200)), '\0\r\n']));
  switch (kind) {
    case 'indexed':
      return { kind, bytes: hpackInt(1 + rng.int(70), 7, 0x80) };
    case 'literal-incremental':
      return { kind, bytes: Buffer.concat([Buffer.from([0x40]), hpackString(Buffer.from(name(rng))), hpackString(value())]) };
    case 'literal-plain':
      return {
        kind,
        bytes: Buffer.concat([
          hpackInt(rng.int(62), 4, 0x00),
          ...(rng.chance(0.5) ? [] : [hpackString(Buffer.from(name(rng)))]),
          hpackString(value()),
        ]),
      };
    case 'literal-never':
      return { kind, bytes: Buffer.concat([hpackInt(1 + rng.int(61), 4, 0x10), hpackString(value())]) };
    case 'size-update':
      return { kind, bytes: hpackInt(rng.edge(20), 5, 0x20) };
    case 'huffman-valid': {
      const text = Array.from({ length: rng.int(40) }, () => rng.pick([...HUFFMAN_5BIT])).join('');
      return { kind, bytes: Buffer.concat([Buffer.from([0x40]), hpackString(huffman5('tcs'), true), hpackString(huffman5(text), true)]) };
    }
    case 'huffman-garbage':
      return { kind, bytes: Buffer.concat([hpackInt(1 + rng.int(61), 6, 0x40), hpackString(rng.bytes(rng.int(40)), true)]) };
    case 'huffman-bad-padding':
      return { kind, bytes: Buffer.concat([hpackInt(1 + rng.int(61), 6, 0x40), hpackString(huffman5('ace', 8 + rng.int(9)), true)]) };
    case 'huge-int':
      return { kind, bytes: Buffer.from([0xff, ...Array.from({ length: 1 + rng.int(12) }, () => 0x80 | rng.int(128)), rng.int(128)]) };
    case 'bad-index':
      return { kind, bytes: hpackInt(62 + rng.edge(20), 7, 0x80) };
  }
}

/** A gRPC request block with random representations inserted before, among or after its fields. */
export function randomBlock(rng: Prng, path: string, kinds: Map<string, number>): Buffer {
  const parts: Buffer[] = [];
  if (rng.chance(0.2)) parts.push(hpackInt(rng.edge(16), 5, 0x20)); // a size update must come first
  const valid = grpcRequestBlock(path);
  if (rng.chance(0.7)) parts.push(valid);
  for (let n = rng.int(6); n > 0; n--) {
    const field = randomField(rng);
    kinds.set(`hpack:${field.kind}`, (kinds.get(`hpack:${field.kind}`) ?? 0) + 1);
    parts.splice(rng.int(parts.length + 1), 0, field.bytes);
  }
  return Buffer.concat(parts);
}
