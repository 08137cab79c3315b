/**
 * The request decoders, on bytes written by hand: fields by number, unknown fields of every wire
 * type skipped, int64 edges, and every malformed message refused as INVALID_ARGUMENT naming the
 * message and the problem. test/jwt-service/codec.test.ts holds the differential run against
 * proto-loader (random messages) and a malformed request over a real connection on both transports.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeGenerateJwtRequest,
  decodeGetJwksRequest,
  decodeGetStatusListRequest,
  decodeRevokeJwtRequest,
  decodeVerifyJwtRequest,
} from '../../../src/jwt-service/codec/decode.js';
import { GrpcStatus } from '../../../src/contracts/handler-api.js';

const bytes = (...parts: (number | string | Buffer)[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'number' ? Buffer.from([p]) : Buffer.isBuffer(p) ? p : Buffer.from(p))));
const str = (field: number, value: string | Buffer): Buffer => {
  const body = Buffer.from(value);
  return bytes((field << 3) | 2, body.length, body);
};
const refused = (message: string) => expect.objectContaining({ status: GrpcStatus.INVALID_ARGUMENT, details: message });

describe('decodeGenerateJwtRequest', () => {
  it('reads every field, and an empty message as all defaults', () => {
    const buf = bytes(str(1, 'ES256'), str(2, 'ada'), str(3, 'api'), 0x20, 0xac, 0x02, str(5, '{}'));
    expect(decodeGenerateJwtRequest(buf)).toEqual({
      algorithm: 'ES256',
      subject: 'ada',
      audience: 'api',
      ttl_seconds: 300,
      claims_json: '{}',
    });
    expect(decodeGenerateJwtRequest(Buffer.alloc(0))).toEqual({
      algorithm: '',
      subject: '',
      audience: '',
      ttl_seconds: 0,
      claims_json: '',
    });
  });

  it('keeps the last of a repeated field, as proto3 merges', () => {
    expect(decodeGenerateJwtRequest(bytes(str(2, 'a'), str(2, 'b'))).subject).toBe('b');
  });

  it('skips unknown fields of every wire type and a closed group', () => {
    const unknown = bytes(
      0x30,
      0x96,
      0x01, // 6: varint
      0x39,
      Buffer.alloc(8), // 7: fixed64
      str(8, 'xyz'), // 8: length-delimited
      0x4b,
      0x50,
      0x01,
      0x4c, // 9: group holding 10: varint, closed
      0x5d,
      Buffer.alloc(4), // 11: fixed32
    );
    expect(decodeGenerateJwtRequest(bytes(unknown, str(2, 'ada')))).toMatchObject({ subject: 'ada' });
  });

  it('reads a negative ttl_seconds from its 10-byte varint', () => {
    const minusOne = bytes(0x20, Buffer.alloc(9, 0xff), 0x01);
    expect(decodeGenerateJwtRequest(minusOne).ttl_seconds).toBe(-1);
  });

  it.each([
    ['a truncated varint', bytes(0x20, 0x80), 'GenerateJwtRequest: truncated varint'],
    ['a varint of 11 bytes', bytes(0x20, Buffer.alloc(10, 0xff), 0x01), 'GenerateJwtRequest: varint longer than 10 bytes'],
    ['a string past the end', bytes(0x12, 5, 'ab'), 'GenerateJwtRequest: truncated length-delimited field'],
    ['field number 0', bytes(0x02, 0), 'GenerateJwtRequest: field number 0'],
    ['a string field as varint', bytes(0x10, 1), 'GenerateJwtRequest: field 2 (subject) has wire type 0, expected 2'],
    ['ttl as a string', bytes(str(4, 'x')), 'GenerateJwtRequest: field 4 (ttl_seconds) has wire type 2, expected 0'],
    ['wire type 6', bytes(0x36), 'GenerateJwtRequest: invalid wire type 6 for field 6'],
    ['a lone end group', bytes(0x34), 'GenerateJwtRequest: invalid wire type 4 for field 6'],
    ['an unclosed group', bytes(0x33, 0x38, 1), 'GenerateJwtRequest: group 6 is not closed'],
    ['a group closed by another', bytes(0x33, 0x3c), 'GenerateJwtRequest: group 6 closed by 7'],
    ['a truncated fixed64', bytes(0x39, Buffer.alloc(7)), 'GenerateJwtRequest: truncated field'],
    ['a tag over 32 bits', bytes(0xff, 0xff, 0xff, 0xff, 0x7f), 'GenerateJwtRequest: varint exceeds 32 bits'],
    ['a subject that is not UTF-8', str(2, Buffer.from([0x61, 0xff])), 'GenerateJwtRequest: subject is not valid UTF-8'],
  ])('refuses %s', (_name, buf, message) => {
    expect(() => decodeGenerateJwtRequest(buf)).toThrow(refused(message));
  });

  it('keeps a U+FFFD sent as its own bytes', () => {
    expect(decodeGenerateJwtRequest(str(2, '\ufffd')).subject).toBe('\ufffd');
  });

  it('refuses groups nested deeper than 100, and takes 100', () => {
    const nested = (depth: number): Buffer =>
      bytes(...Array.from({ length: depth }, () => 0x33), ...Array.from({ length: depth }, () => 0x34));
    expect(() => decodeGenerateJwtRequest(nested(100))).not.toThrow();
    expect(() => decodeGenerateJwtRequest(nested(101))).toThrow(refused('GenerateJwtRequest: groups nested deeper than 100'));
  });
});

describe('the other requests', () => {
  it('VerifyJwtRequest: jwt, audience, issuer', () => {
    expect(decodeVerifyJwtRequest(bytes(str(1, 'a.b.c'), str(2, 'api'), str(3, 'iss'), str(9, 'x')))).toEqual({
      jwt: 'a.b.c',
      audience: 'api',
      issuer: 'iss',
    });
    expect(() => decodeVerifyJwtRequest(bytes(0x08, 1))).toThrow(refused('VerifyJwtRequest: field 1 (jwt) has wire type 0, expected 2'));
  });

  it('GetJwksRequest: no fields, unknown ones skipped, malformed ones refused', () => {
    expect(decodeGetJwksRequest(bytes(str(1, 'x'), 0x10, 1))).toEqual({});
    expect(() => decodeGetJwksRequest(bytes(0x0a, 3))).toThrow(refused('GetJwksRequest: truncated field'));
  });

  it('GetStatusListRequest: uri', () => {
    expect(decodeGetStatusListRequest(bytes(0x10, 1, str(1, 'https://s/1')))).toEqual({ uri: 'https://s/1' });
    expect(() => decodeGetStatusListRequest(bytes(0x08, 1))).toThrow(
      refused('GetStatusListRequest: field 1 (uri) has wire type 0, expected 2'),
    );
  });

  it('RevokeJwtRequest: jwt, jti, expires_at up to int64 edges, reason', () => {
    const max = bytes(0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f); // 2^53 - 1
    expect(decodeRevokeJwtRequest(bytes(str(1, 'j.w.t'), str(2, 'id'), max, str(4, 'lost')))).toEqual({
      jwt: 'j.w.t',
      jti: 'id',
      expires_at: Number.MAX_SAFE_INTEGER,
      reason: 'lost',
    });
    expect(() => decodeRevokeJwtRequest(str(3, 'x'))).toThrow(
      refused('RevokeJwtRequest: field 3 (expires_at) has wire type 2, expected 0'),
    );
  });
});
