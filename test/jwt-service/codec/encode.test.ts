/**
 * The response encoders, byte for byte: proto3 leaves out default values, a buffer is exactly
 * as long as what is written (sizes computed before writing), int64 is two's complement in ten
 * bytes when negative, and an unknown reason is an internal error, never a wrong number.
 * test/jwt-service/codec.test.ts decodes random responses with proto-loader.
 */
import { describe, expect, it } from 'vitest';
import {
  REASON_NUMBERS,
  encodeGenerateJwtResponse,
  encodeGetJwksResponse,
  encodeGetStatusListResponse,
  encodeRevokeJwtResponse,
  encodeVerifyJwtResponse,
} from '../../../src/jwt-service/codec/encode.js';

const hex = (buf: Buffer): string => buf.toString('hex');

describe('encodeGenerateJwtResponse', () => {
  it('writes jwt, sub, kid and expires_at in field order', () => {
    const out = encodeGenerateJwtResponse({ jwt: 'a.b.c', sub: 'ada', kid: 'k1', expires_at: 300 });
    expect(hex(out)).toBe(
      `0a05${Buffer.from('a.b.c').toString('hex')}1203${Buffer.from('ada').toString('hex')}1a02${Buffer.from('k1').toString('hex')}20ac02`,
    );
  });

  it('writes nothing for an all-default response', () => {
    expect(encodeGenerateJwtResponse({ jwt: '', sub: '', kid: '', expires_at: 0 }).length).toBe(0);
  });

  it('sizes multi-byte lengths and UTF-8 exactly', () => {
    const jwt = 'é'.repeat(100); // 200 bytes: a two-byte length
    const out = encodeGenerateJwtResponse({ jwt, sub: '', kid: '', expires_at: 0 });
    expect(out.length).toBe(1 + 2 + 200);
    expect(hex(out.subarray(0, 3))).toBe('0ac801');
    expect(out.subarray(3).toString('utf8')).toBe(jwt);
  });

  it.each([
    [1, '2001'],
    [2 ** 32 - 1, '20ffffffff0f'],
    [2 ** 32, '208080808010'],
    [Number.MAX_SAFE_INTEGER, '20ffffffffffffff0f'],
    [-1, `20${'ff'.repeat(9)}01`],
    [-(2 ** 32), `2080808080f0${'ff'.repeat(4)}01`],
  ])('writes expires_at %d as %s', (expires_at, expected) => {
    expect(hex(encodeGenerateJwtResponse({ jwt: '', sub: '', kid: '', expires_at }))).toBe(expected);
  });
});

describe('encodeVerifyJwtResponse', () => {
  it('writes valid, sub, claims_json, and leaves out REASON_UNSPECIFIED', () => {
    const out = encodeVerifyJwtResponse({ valid: true, sub: 'a', claims_json: '{}', reason: 'REASON_UNSPECIFIED' });
    expect(hex(out)).toBe('0801120161' + '1a027b7d');
  });

  it('writes the reason by its number', () => {
    expect(hex(encodeVerifyJwtResponse({ valid: false, sub: '', claims_json: '', reason: 'REVOKED' }))).toBe('200a');
    expect(REASON_NUMBERS.EXPIRED).toBe(5);
  });

  it('refuses an unknown reason as an internal error', () => {
    expect(() => encodeVerifyJwtResponse({ valid: false, sub: '', claims_json: '', reason: 'NOPE' as never })).toThrow(
      expect.objectContaining({ code: 'ERR_INTERNAL', message: expect.stringContaining('VerifyJwtResponse.reason: unknown value "NOPE"') }),
    );
  });
});

describe('the other responses', () => {
  it('GetJwks and GetStatusList: one string, nothing when empty', () => {
    expect(hex(encodeGetJwksResponse({ jwks_json: '{}' }))).toBe('0a027b7d');
    expect(encodeGetJwksResponse({ jwks_json: '' }).length).toBe(0);
    expect(hex(encodeGetStatusListResponse({ token: 'x' }))).toBe('0a0178');
  });

  it('RevokeJwt: revoked and expires_at', () => {
    expect(hex(encodeRevokeJwtResponse({ revoked: true, expires_at: 128 }))).toBe('08011080' + '01');
    expect(encodeRevokeJwtResponse({ revoked: false, expires_at: 0 }).length).toBe(0);
    expect(hex(encodeRevokeJwtResponse({ revoked: false, expires_at: -1 }))).toBe(`10${'ff'.repeat(9)}01`);
  });
});
