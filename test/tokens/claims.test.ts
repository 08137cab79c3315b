/**
 * Claim checks (src/tokens/claims.ts): types once, time and expectations on every verify;
 * a call's expectations over the verifier's own; the audience option refused by name.
 */
import { describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  NO_EXPECTATIONS,
  audienceOption,
  checkClaimTypes,
  checkClaims,
  checkedAudience,
  expectationsFor,
} from '../../src/tokens/claims.js';

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

describe('expectationsFor', () => {
  const own = { audience: 'own-aud', issuer: 'own-iss' };

  it('keeps the verifier’s own object when the call changes nothing', () => {
    expect(expectationsFor(undefined, own)).toBe(own);
    expect(expectationsFor({}, own)).toBe(own);
    expect(expectationsFor({ audience: '', issuer: '' }, own)).toBe(own);
    expect(expectationsFor({ audience: 'own-aud' }, own)).toBe(own);
  });

  it('lets a named field win, and ANY_AUDIENCE turn the audience check off', () => {
    expect(expectationsFor({ audience: 'other' }, own)).toEqual({ audience: 'other', issuer: 'own-iss' });
    expect(expectationsFor({ issuer: 'iss2' }, own)).toEqual({ audience: 'own-aud', issuer: 'iss2' });
    expect(expectationsFor({ audience: ANY_AUDIENCE }, own)).toEqual({ audience: undefined, issuer: 'own-iss' });
  });

  it('refuses a misspelt expectation, suggesting the nearest', () => {
    expect(() => expectationsFor({ audiance: 'x' } as never, own)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'expect.audiance',
        message: 'option expect.audiance: is not an expectation; did you mean expect.audience?',
      }),
    );
    expect(() => expectationsFor({ subject: 'x' } as never, own)).toThrow(
      'option expect.subject: is not an expectation; a call names only audience and issuer',
    );
  });
});

describe('audienceOption', () => {
  it('accepts a non-empty string or ANY_AUDIENCE; left out, undefined unless required', () => {
    expect(audienceOption('api', true)).toBe('api');
    expect(audienceOption(ANY_AUDIENCE, true)).toBe(ANY_AUDIENCE);
    expect(audienceOption(undefined, false)).toBeUndefined();
    expect(checkedAudience(ANY_AUDIENCE)).toBeUndefined();
    expect(checkedAudience('api')).toBe('api');
  });

  it('refuses a missing required audience naming both choices, and a bad value naming it', () => {
    expect(() => audienceOption(undefined, true)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'audience', message: expect.stringMatching(/audience: ANY_AUDIENCE/) }),
    );
    expect(() => audienceOption('', true)).toThrow('must be a non-empty string or ANY_AUDIENCE, got ""');
    expect(() => audienceOption(['a'], false)).toThrow('got ["a"]');
    expect(() => audienceOption(Symbol('other'), false)).toThrow('got Symbol(other)');
  });
});
