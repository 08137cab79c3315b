/**
 * The response decoders, the client's side: their tables are proto/jwt.proto's messages field
 * for field; every response proto-loader encodes (and every one the server's encoders write)
 * decodes to the object proto-loader's own deserializer gives (random messages, defaults,
 * empty messages, unicode, int64 edges, every reason, unknown fields, merged messages); a
 * malformed response is INTERNAL naming the message and the field.
 */
import { describe, expect, it } from 'vitest';
import {
  RESPONSE_MESSAGES,
  decodeGenerateJwtResponse,
  decodeGetJwksResponse,
  decodeGetStatusListResponse,
  decodeRevokeJwtResponse,
  decodeVerifyJwtResponse,
} from '../../../src/jwt-service/codec/decode-response.js';
import {
  REASON_NUMBERS,
  encodeGenerateJwtResponse,
  encodeRevokeJwtResponse,
  encodeVerifyJwtResponse,
} from '../../../src/jwt-service/codec/encode.js';
import type { VerifyJwtReason } from '../../../src/jwt-service/messages.js';
import { GrpcStatus, GrpcStatusError } from '../../../src/contracts/handler-api.js';
import {
  SAMPLE_INT64,
  SAMPLE_STRINGS,
  definition,
  generateJwt,
  getJwks,
  getStatusList,
  protoFields,
  randomInt64,
  randomString,
  revokeJwt,
  rng,
  serviceMessages,
  unknownField,
  varint,
  verifyJwt,
} from './proto-loader.js';

const REASONS = Object.keys(REASON_NUMBERS) as VerifyJwtReason[];

/** A length-delimited field `field` holding `bytes` as they are. */
const rawField = (field: number, bytes: Buffer): Buffer =>
  Buffer.concat([varint(BigInt(field * 8 + 2)), varint(BigInt(bytes.length)), bytes]);

/** What a decoder throws for `buf`: a GrpcStatusError, or the test fails. */
function failure(decode: (buf: Buffer) => unknown, buf: Buffer): GrpcStatusError {
  try {
    decode(buf);
  } catch (err) {
    if (err instanceof GrpcStatusError) return err;
    throw err;
  }
  throw new Error(`decoded ${buf.toString('hex')} without an error`);
}

describe('the response tables', () => {
  it("are the .proto's response messages, field for field, and every one the service answers", () => {
    expect(Object.keys(RESPONSE_MESSAGES).sort()).toEqual(serviceMessages('responseType'));
    for (const [message, spec] of Object.entries(RESPONSE_MESSAGES)) {
      expect(spec.name).toBe(message);
      expect(spec.fields.map(([number, name, type]) => [number, name, type === 'reason' ? 'enum Reason' : type])).toEqual(
        protoFields(message),
      );
    }
  });

  it('with the requests, are every message of the package: no other (nested, map entry) goes without a codec', () => {
    const messages = Object.keys(definition)
      .filter((name) => 'type' in (definition[name] as object))
      .map((name) => name.replace(/^jwt\.services\./, ''));
    expect(messages.sort()).toEqual([...serviceMessages('requestType'), ...serviceMessages('responseType')].sort());
  });
});

describe("responses decode as proto-loader's deserializer decodes them", () => {
  it('GenerateJwtResponse: 2,000 random responses, with unknown fields mixed in and messages merged', () => {
    const next = rng(21);
    const random = () => ({ jwt: randomString(next), sub: randomString(next), kid: randomString(next), expires_at: randomInt64(next) });
    for (let i = 0; i < 2000; i++) {
      let buf = generateJwt.responseSerialize(random());
      if (i % 3 === 1) buf = Buffer.concat([unknownField(next), buf, unknownField(next)]);
      // Concatenated messages merge: for scalar fields the last value wins.
      if (i % 5 === 2) buf = Buffer.concat([buf, generateJwt.responseSerialize(random())]);
      expect(decodeGenerateJwtResponse(buf)).toEqual(generateJwt.responseDeserialize(buf));
    }
  });

  it('an empty message is every field at its default, with every key present', () => {
    const empty = Buffer.alloc(0);
    expect(decodeGenerateJwtResponse(empty)).toStrictEqual({ jwt: '', sub: '', kid: '', expires_at: 0 });
    expect(decodeVerifyJwtResponse(empty)).toStrictEqual({ valid: false, sub: '', claims_json: '', reason: 'REASON_UNSPECIFIED' });
    expect(decodeGetJwksResponse(empty)).toStrictEqual({ jwks_json: '' });
    expect(decodeGetStatusListResponse(empty)).toStrictEqual({ token: '' });
    expect(decodeRevokeJwtResponse(empty)).toStrictEqual({ revoked: false, expires_at: 0 });
    for (const [decode, method] of [
      [decodeGenerateJwtResponse, generateJwt],
      [decodeVerifyJwtResponse, verifyJwt],
      [decodeGetJwksResponse, getJwks],
      [decodeGetStatusListResponse, getStatusList],
      [decodeRevokeJwtResponse, revokeJwt],
    ] as const) {
      expect(Object.keys(decode(empty) as object)).toEqual(Object.keys(method.responseDeserialize(empty) as object));
    }
  });

  it('int64 fields: every edge, 2^63 - 1 and -2^63 included, as the same Number', () => {
    for (const value of [...SAMPLE_INT64, 2 ** 53, 2 ** 60, '9223372036854775807', '-9223372036854775808']) {
      const buf = revokeJwt.responseSerialize({ revoked: true, expires_at: value });
      expect(decodeRevokeJwtResponse(buf), String(value)).toEqual(revokeJwt.responseDeserialize(buf));
      const generated = generateJwt.responseSerialize({ expires_at: value });
      expect(decodeGenerateJwtResponse(generated)).toEqual(generateJwt.responseDeserialize(generated));
    }
  });

  it('VerifyJwtResponse: every reason by its name, valid or not', () => {
    const next = rng(22);
    for (const reason of REASONS) {
      for (const valid of [true, false]) {
        const buf = verifyJwt.responseSerialize({ valid, sub: randomString(next), claims_json: randomString(next), reason });
        expect(decodeVerifyJwtResponse(buf)).toEqual(verifyJwt.responseDeserialize(buf));
        expect(decodeVerifyJwtResponse(buf).reason).toBe(reason);
      }
    }
  });

  it('a bool is true for any non-zero varint', () => {
    expect(decodeRevokeJwtResponse(Buffer.from([0x08, 0x02])).revoked).toBe(true);
    expect(decodeVerifyJwtResponse(Buffer.from([0x08, 0x80, 0x01])).valid).toBe(true);
    expect(decodeVerifyJwtResponse(Buffer.from([0x08, 0x00])).valid).toBe(false);
  });

  it('GetJwksResponse and GetStatusListResponse: unicode, long and empty strings', () => {
    for (const text of [...SAMPLE_STRINGS, `h.${'x'.repeat(200_000)}.s`]) {
      const jwks = getJwks.responseSerialize({ jwks_json: text });
      expect(decodeGetJwksResponse(jwks)).toEqual(getJwks.responseDeserialize(jwks));
      const list = getStatusList.responseSerialize({ token: text });
      expect(decodeGetStatusListResponse(list)).toEqual(getStatusList.responseDeserialize(list));
    }
  });

  it("reads back what the server's encoders write", () => {
    const next = rng(23);
    for (let i = 0; i < 300; i++) {
      const generated = { jwt: randomString(next), sub: randomString(next), kid: randomString(next), expires_at: randomInt64(next) };
      expect(decodeGenerateJwtResponse(encodeGenerateJwtResponse(generated))).toEqual(generated);
      const verified = {
        valid: next() < 0.5,
        sub: randomString(next),
        claims_json: randomString(next),
        reason: REASONS[i % REASONS.length]!,
      };
      expect(decodeVerifyJwtResponse(encodeVerifyJwtResponse(verified))).toEqual(verified);
      const revoked = { revoked: true, expires_at: randomInt64(next) };
      expect(decodeRevokeJwtResponse(encodeRevokeJwtResponse(revoked))).toEqual(revoked);
    }
  });

  it('unknown fields of every wire type are skipped, groups nested 100 deep included (proto3 forward compatibility)', () => {
    const next = rng(24);
    const known = verifyJwt.responseSerialize({ valid: true, sub: 'ada', reason: 'EXPIRED' });
    const unknown = Buffer.concat(Array.from({ length: 20 }, () => unknownField(next)));
    const deep = Buffer.concat([Buffer.alloc(100, 0x33), Buffer.alloc(100, 0x34)]);
    const buf = Buffer.concat([unknown, deep, known]);
    expect(decodeVerifyJwtResponse(buf)).toEqual({ valid: true, sub: 'ada', claims_json: '', reason: 'EXPIRED' });
    expect(decodeVerifyJwtResponse(buf)).toEqual(verifyJwt.responseDeserialize(buf));
    expect(decodeGetJwksResponse(unknown)).toEqual({ jwks_json: '' });
  });
});

describe('a malformed response is INTERNAL naming the message and the field', () => {
  it('cut anywhere but between two fields it is refused as truncated; cut between fields it decodes as proto-loader does', () => {
    const parts = [{ jwt: 'a.b.c' }, { sub: 'ünïcödé' }, { kid: 'k1' }, { expires_at: -5 }].map((field) =>
      generateJwt.responseSerialize(field),
    );
    const whole = Buffer.concat(parts);
    const boundaries = new Set(parts.map((_, i) => Buffer.concat(parts.slice(0, i)).length));
    for (let length = 0; length < whole.length; length++) {
      const cut = whole.subarray(0, length);
      if (boundaries.has(length)) expect(decodeGenerateJwtResponse(cut), `cut at ${length}`).toEqual(generateJwt.responseDeserialize(cut));
      else {
        const refused = failure(decodeGenerateJwtResponse, cut);
        expect(refused.status, `cut at ${length}`).toBe(GrpcStatus.INTERNAL);
        // A cut inside a field names it; a cut inside a tag has no field yet.
        expect(refused.details, `cut at ${length}`).toMatch(/^GenerateJwtResponse: (field \d \((jwt|sub|kid|expires_at)\): )?truncated/);
      }
    }
  });

  it.each([
    ['a truncated varint', decodeGenerateJwtResponse, [0x20, 0x80], 'GenerateJwtResponse: field 4 (expires_at): truncated varint'],
    [
      'a length past the end',
      decodeGenerateJwtResponse,
      [0x0a, 0x05, 0x61],
      'GenerateJwtResponse: field 1 (jwt): truncated length-delimited field',
    ],
    ['a truncated length', decodeGetJwksResponse, [0x0a, 0x80], 'GetJwksResponse: field 1 (jwks_json): truncated varint'],
    [
      'a string sent as a varint',
      decodeGetStatusListResponse,
      [0x08, 0x01],
      'GetStatusListResponse: field 1 (token) has wire type 0, expected 2',
    ],
    [
      'an int64 sent as a string',
      decodeRevokeJwtResponse,
      [0x12, 0x01, 0x41],
      'RevokeJwtResponse: field 2 (expires_at) has wire type 2, expected 0',
    ],
    [
      'a bool sent as fixed32',
      decodeVerifyJwtResponse,
      [0x0d, 0, 0, 0, 1],
      'VerifyJwtResponse: field 1 (valid) has wire type 5, expected 0',
    ],
    [
      'an 11-byte varint',
      decodeRevokeJwtResponse,
      [0x10, ...Array(10).fill(0xff), 0x01],
      'RevokeJwtResponse: field 2 (expires_at): varint longer than 10 bytes',
    ],
    [
      'a reason this client has no name for',
      decodeVerifyJwtResponse,
      [0x20, 0x0b],
      'VerifyJwtResponse: field 4 (reason): unknown value 11',
    ],
    [
      'a negative reason',
      decodeVerifyJwtResponse,
      [0x20, ...Array(9).fill(0xff), 0x01],
      'VerifyJwtResponse: field 4 (reason): unknown value -1',
    ],
    ['field number 0', decodeGetJwksResponse, [0x02, 0x00], 'GetJwksResponse: field number 0'],
    ['an unknown field cut short', decodeGetJwksResponse, [0x12, 0x05, 0x61], 'GetJwksResponse: truncated field'],
    ['an unclosed unknown group', decodeRevokeJwtResponse, [0x33, 0x08, 0x01], 'RevokeJwtResponse: group 6 is not closed'],
    ['wire type 6', decodeGenerateJwtResponse, [0x36], 'GenerateJwtResponse: invalid wire type 6 for field 6'],
  ] as const)('%s', (_name, decode, bytes, details) => {
    const refused = failure(decode, Buffer.from(bytes));
    expect(refused.status).toBe(GrpcStatus.INTERNAL);
    expect(refused.details).toBe(details);
  });

  it('groups nested deeper than 100 are refused, not a stack overflow', () => {
    const deep = Buffer.concat([Buffer.alloc(20_000, 0x33), Buffer.alloc(20_000, 0x34)]);
    expect(failure(decodeGetStatusListResponse, deep).details).toBe('GetStatusListResponse: groups nested deeper than 100');
  });

  it('a string field that is not valid UTF-8 is refused naming it, never read as U+FFFD', () => {
    const bad = Buffer.from([0x6f, 0x6b, 0xff]);
    expect(failure(decodeGenerateJwtResponse, rawField(2, bad)).details).toBe('GenerateJwtResponse: field 2 (sub) is not valid UTF-8');
    expect(failure(decodeVerifyJwtResponse, rawField(3, bad)).details).toBe('VerifyJwtResponse: field 3 (claims_json) is not valid UTF-8');
    expect(decodeGenerateJwtResponse(rawField(2, Buffer.from('a\ufffdb'))).sub).toBe('a\ufffdb');
  });
});
