/** gRPC length-prefixed messages (5-byte prefix: compressed flag, big-endian length) for the fuzzer. */
import type { Prng } from './prng.js';

export const METHODS = {
  generate: '/jwt.services.JwtService/GenerateJwt',
  verify: '/jwt.services.JwtService/VerifyJwt',
  jwks: '/jwt.services.JwtService/GetJwks',
  healthWatch: '/grpc.health.v1.Health/Watch',
  reflection: '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
} as const;

function protoString(field: number, text: string): Buffer {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
}

/** A GenerateJwtRequest { algorithm: 'HS256', subject } as protobuf. */
export function generateRequest(subject = 'fuzz'): Buffer {
  return Buffer.concat([protoString(1, 'HS256'), protoString(2, subject)]);
}

export function lengthPrefixed(message: Buffer, compressed = false, lengthOverride?: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE((lengthOverride ?? message.length) >>> 0, 1);
  return Buffer.concat([prefix, message]);
}

export const GRPC_KINDS = [
  'valid',
  'compressed-flag',
  'flag-2..255',
  'length-short',
  'length-long',
  'length-huge',
  'prefix-only',
  'garbage-protobuf',
  'two-messages',
] as const;

/** A request body: one of GRPC_KINDS, and its kind. */
export function randomBody(rng: Prng): { kind: string; bytes: Buffer } {
  const kind = rng.pick(GRPC_KINDS);
  const message = generateRequest();
  switch (kind) {
    case 'valid':
      return { kind, bytes: lengthPrefixed(message) };
    case 'compressed-flag':
      return { kind, bytes: lengthPrefixed(message, true) };
    case 'flag-2..255': {
      const bytes = lengthPrefixed(message);
      bytes[0] = 2 + rng.int(254);
      return { kind, bytes };
    }
    case 'length-short':
      return { kind, bytes: lengthPrefixed(message, false, rng.int(message.length)) };
    case 'length-long':
      return { kind, bytes: lengthPrefixed(message, false, message.length + 1 + rng.int(100)) };
    case 'length-huge':
      return { kind, bytes: lengthPrefixed(message, false, rng.edge(32)) };
    case 'prefix-only':
      return { kind, bytes: lengthPrefixed(Buffer.alloc(0), rng.chance(0.5)).subarray(0, 1 + rng.int(5)) };
    case 'garbage-protobuf':
      return { kind, bytes: lengthPrefixed(rng.bytes(rng.int(64))) };
    case 'two-messages':
      return { kind, bytes: Buffer.concat([lengthPrefixed(message), lengthPrefixed(message)]) };
  }
  throw new Error(`unknown kind ${kind}`);
}
