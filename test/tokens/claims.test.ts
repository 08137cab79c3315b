/**
 * Claim checks (src/tokens/claims.ts): types once, time and expectations on every verify.
 * test/tokens/audience.test.ts holds a call's expectations and the audience option through
 * createVerifier.
 */
import { describe, expect, it } from 'vitest';
import { NO_EXPECTATIONS, checkClaimTypes, checkClaims } from '../../src/tokens/claims.js';

const NOW = 1_800_000_000;

describe('checkClaimTypes', () => {
  it('accepts a well-typed payload', () => {
    expect(checkClaimTypes({ exp: NOW, nbf: NOW, iat: NOW, sub: 's', iss: 'i', aud: ['a', 'b'], custom: { any: 1 } })).toBeUndefined();
    expect(checkClaimTypes({ exp: NOW, aud: 'a' })).toBeUndefined();
  });

  it.each([
    [{ exp: '123' }, 'claim exp must be a number of seconds'],
    [{ exp: NOW, nbf: Number.NaN }, 'claim nbf must be a number of seconds'],
    [{ exp: NOW, iat: Number.POSITIVE_INFINITY }, 'claim iat must be a number of seconds'],
    [{}, 'claim exp is missing: tokens without expiry are refused'],
    [{ exp: NOW, sub: 7 }, 'claim sub must be a string'],
    [{ exp: NOW, iss: null }, 'claim iss must be a string'],
    [{ exp: NOW, aud: 5 }, 'claim aud must be a string or an array of strings'],
    [{ exp: NOW, aud: ['a', 5] }, 'claim aud must be a string or an array of strings'],
  ])('refuses %j: %s', (payload, message) => {
    expect(checkClaimTypes(payload)).toEqual({ valid: false, reason: 'MALFORMED', message });
  });
});

describe('checkClaims', () => {
  const none = NO_EXPECTATIONS;

  it('refuses an expired token at exp, within the tolerance', () => {
    expect(checkClaims({ exp: NOW + 1 }, NOW, 0, none)).toBeUndefined();
    expect(checkClaims({ exp: NOW }, NOW, 0, none)).toMatchObject({ reason: 'EXPIRED', message: 'token has expired (exp)' });
    expect(checkClaims({ exp: NOW - 4 }, NOW, 5, none)).toBeUndefined();
    expect(checkClaims({ exp: NOW - 5 }, NOW, 5, none)).toMatchObject({ reason: 'EXPIRED' });
  });

  it('refuses nbf and iat in the future beyond the tolerance', () => {
    expect(checkClaims({ exp: NOW + 60, nbf: NOW + 5 }, NOW, 5, none)).toBeUndefined();
    expect(checkClaims({ exp: NOW + 60, nbf: NOW + 6 }, NOW, 5, none)).toEqual({
      valid: false,
      reason: 'NOT_YET_VALID',
      message: 'token is not valid yet (nbf)',
    });
    expect(checkClaims({ exp: NOW + 60, iat: NOW + 6 }, NOW, 5, none)).toEqual({
      valid: false,
      reason: 'NOT_YET_VALID',
      message: 'token was issued in the future (iat)',
    });
  });

  it('checks the audience in a string or an array, and the issuer exactly', () => {
    const expectations = { audience: 'api', issuer: 'https://auth' };
    const base = { exp: NOW + 60, iss: 'https://auth' };
    expect(checkClaims({ ...base, aud: 'api' }, NOW, 0, expectations)).toBeUndefined();
    expect(checkClaims({ ...base, aud: ['x', 'api'] }, NOW, 0, expectations)).toBeUndefined();
    expect(checkClaims({ ...base, aud: 'apix' }, NOW, 0, expectations)).toEqual({
      valid: false,
      reason: 'AUDIENCE_MISMATCH',
      message: 'token aud does not contain the expected audience',
    });
    expect(checkClaims({ ...base, aud: ['apix'] }, NOW, 0, expectations)).toMatchObject({ reason: 'AUDIENCE_MISMATCH' });
    expect(checkClaims(base, NOW, 0, expectations)).toMatchObject({
      reason: 'AUDIENCE_MISMATCH',
      message: 'token has no aud claim, and an audience is expected',
    });
    expect(checkClaims({ ...base, aud: 'api', iss: 'https://auth/' }, NOW, 0, expectations)).toEqual({
      valid: false,
      reason: 'ISSUER_MISMATCH',
      message: 'token iss is not the expected issuer',
    });
    expect(checkClaims({ exp: NOW + 60 }, NOW, 0, none), 'nothing expected, nothing checked').toBeUndefined();
  });
});
