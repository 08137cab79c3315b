/**
 * What the codec tests share: proto-loader's own codecs of proto/jwt.proto under the
 * service's loader options (what the hand-written codecs are held to), and generators of
 * random messages, edge values and unknown fields.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_PATH } from '../../../src/base/package-root.js';
import { SERVICE_NAME } from '../../../src/jwt-service/definition.js';
import { PROTO_LOADER_OPTIONS } from '../../../src/protos/load.js';

/** A method of JwtService with proto-loader's four codecs. */
export interface ProtoLoaderMethod {
  requestSerialize: (value: unknown) => Buffer;
  requestDeserialize: (buf: Buffer) => unknown;
  responseSerialize: (value: unknown) => Buffer;
  responseDeserialize: (buf: Buffer) => unknown;
}

export const definition = loadSync(PROTO_PATH, PROTO_LOADER_OPTIONS);
const methods = definition[SERVICE_NAME] as unknown as Record<string, ProtoLoaderMethod>;
export const generateJwt = methods['GenerateJwt']!;
export const verifyJwt = methods['VerifyJwt']!;
export const getJwks = methods['GetJwks']!;
export const getStatusList = methods['GetStatusList']!;
export const revokeJwt = methods['RevokeJwt']!;
export const exchangeToken = methods['ExchangeToken']!;

/** A small deterministic generator, so a failure reproduces. */
export function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 0x1_0000_0000;
  };
}

export const SAMPLE_STRINGS = [
  '',
  'HS256',
  'ada@example.com',
  'ünïcödé ✓ 漢字 🙂',
  '\u0000nul inside',
  'x'.repeat(127),
  'y'.repeat(128),
  'z'.repeat(16_384),
  '🙂'.repeat(5000),
];

export function randomString(next: () => number): string {
  if (next() < 0.5) return SAMPLE_STRINGS[Math.floor(next() * SAMPLE_STRINGS.length)] as string;
  // Whole code points: a lone surrogate has no UTF-8 form (test/jwt-service/codec.test.ts and codec/encode-request.test.ts test it).
  const chars = Array.from('abcXYZ019-_.@ éß€😀');
  return Array.from({ length: Math.floor(next() * 300) }, () => chars[Math.floor(next() * chars.length)]).join('');
}

export const SAMPLE_INT64 = [
  0,
  1,
  -1,
  127,
  128,
  7200,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  1_800_000_000,
  2 ** 53 - 1,
  -(2 ** 31),
  -(2 ** 32),
  -(2 ** 53 - 1),
];

export function randomInt64(next: () => number): number {
  return next() < 0.7 ? (SAMPLE_INT64[Math.floor(next() * SAMPLE_INT64.length)] as number) : Math.floor((next() - 0.5) * 2 ** 50);
}

/** A field proto/jwt.proto does not have, of every wire type, as raw bytes. */
export function unknownField(next: () => number): Buffer {
  const field = 6 + Math.floor(next() * 2000);
  const tag = (wireType: number): Buffer => varint(BigInt(field * 8 + wireType));
  switch (Math.floor(next() * 5)) {
    case 0:
      return Buffer.concat([tag(0), varint(BigInt(Math.floor(next() * 2 ** 40)))]);
    case 1:
      return Buffer.concat([tag(1), randomBytes(8)]);
    case 2: {
      const body = randomBytes(Math.floor(next() * 200));
      return Buffer.concat([tag(2), varint(BigInt(body.length)), body]);
    }
    case 3:
      // A group holding a varint field, closed by the matching end tag.
      return Buffer.concat([tag(3), varint(8n), varint(5n), tag(4)]);
    default:
      return Buffer.concat([tag(5), randomBytes(4)]);
  }
}

export function varint(value: bigint): Buffer {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, value);
  while (v >= 0x80n) {
    bytes.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  bytes.push(Number(v));
  return Buffer.from(bytes);
}

/** A message's fields as the .proto declares them, in the terms of the codec tables. */
export function protoFields(message: string): [number, string, string][] {
  const type = (definition[`jwt.services.${message}`] as unknown as { type: ProtoType }).type;
  // Maps are nested types, oneofs oneofDecls; a repeated field is not LABEL_OPTIONAL: none of them has a codec here.
  expect(type.nestedType, `${message} has a map or nested message`).toEqual([]);
  expect(type.oneofDecl, `${message} has a oneof`).toEqual([]);
  return type.field.map((field) => {
    expect(field.label, `${message}.${field.name}`).toBe('LABEL_OPTIONAL');
    expect(field.proto3Optional, `${message}.${field.name}`).toBe(false);
    return [
      field.number,
      field.name,
      field.type === 'TYPE_ENUM' ? `enum ${field.typeName}` : field.type.replace('TYPE_', '').toLowerCase(),
    ];
  });
}

interface ProtoType {
  field: { name: string; number: number; label: string; type: string; typeName: string; proto3Optional: boolean }[];
  nestedType: unknown[];
  oneofDecl: unknown[];
}

/** The names of the messages the service's methods take (`requestType`) or answer (`responseType`), sorted. */
export function serviceMessages(side: 'requestType' | 'responseType'): string[] {
  const service = definition[SERVICE_NAME] as unknown as Record<string, Record<typeof side, { type: { name: string } }>>;
  return Object.values(service)
    .map((method) => method[side].type.name)
    .sort();
}
