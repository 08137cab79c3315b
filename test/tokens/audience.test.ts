/**
 * A local verifier checks an audience, or was told on purpose not to (ANY_AUDIENCE):
 * made without one, a token minted for any other service would pass it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, type KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib/index.js';

let keys: KeySet;
beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256'] });
});

const token = (claims: Record<string, unknown>): string => {
  const now = Math.floor(Date.now() / 1000);
  return createSigner(keys).sign('ES256', { sub: 'ada', iat: now, exp: now + 600, ...claims }).token;
};

describe('createVerifier audience', () => {
  it('refuses to be made without an audience, naming both ways to give one', () => {
    for (const options of [undefined, {}, { audience: undefined }, { clockToleranceSeconds: 5 }]) {
      expect(() => createVerifier(keys, options as never)).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_OPTION',
          field: 'audience',
          message: expect.stringMatching(/is required: give audience: 'my-service'.*or audience: ANY_AUDIENCE/),
        }),
      );
    }
    for (const [audience, shown] of [
      ['', '""'],
      [null, 'null'],
      [7, '7'],
      [['a'], '["a"]'],
      [Symbol('ANY_AUDIENCE'), 'Symbol(ANY_AUDIENCE)'],
    ] as const) {
      expect(() => createVerifier(keys, { audience } as never)).toThrow(
        `option audience: must be a non-empty string or ANY_AUDIENCE, got ${shown}`,
      );
    }
    expect(() => createVerifier(keys, { audience: 'api', issuer: '' })).toThrow(expect.objectContaining({ field: 'issuer' }));
  });

  it('checks its audience on every call that names none; a call may name another', () => {
    const verifier = createVerifier(keys, { audience: 'api' });
    expect(verifier.audience).toBe('api');
    expect(verifier.verify(token({ aud: 'api' })).valid).toBe(true);
    expect(verifier.verify(token({ aud: ['other', 'api'] })).valid).toBe(true);
    expect(verifier.verify(token({ aud: 'other' }))).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
    expect(verifier.verify(token({}))).toMatchObject({
      valid: false,
      reason: 'AUDIENCE_MISMATCH',
      message: expect.stringContaining('no aud'),
    });
    // The cache remembers a token's signature, never the answer for another audience.
    const forOther = token({ aud: 'other' });
    expect(verifier.verify(forOther, { audience: 'other' }).valid).toBe(true);
    expect(verifier.verify(forOther)).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
    // An empty or absent field keeps the verifier's own: it never switches the check off.
    expect(verifier.verify(forOther, { audience: '' })).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
    expect(verifier.verifyUncached(forOther, {})).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
    expect(verifier.verify(forOther, { audience: ANY_AUDIENCE }).valid).toBe(true);
  });

  it("refuses a call's expectation it does not know, naming it and the nearest: a misspelt one would leave the verifier's own in force", () => {
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
    const forOther = token({ aud: 'other' });
    const misspelt = { audiance: 'api' } as never;
    expect(() => verifier.verify(forOther, misspelt)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'expect.audiance',
        message: expect.stringContaining('did you mean expect.audience?'),
      }),
    );
    expect(() => verifier.verifyUncached(forOther, misspelt)).toThrow(expect.objectContaining({ field: 'expect.audiance' }));
    expect(() => verifier.verify(forOther, { subject: 'x' } as never)).toThrow(
      'option expect.subject: is not an expectation; a call names only audience and issuer',
    );
  });

  it('with ANY_AUDIENCE accepts a token for any audience or none; a call may still ask for one', () => {
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
    expect(verifier.audience).toBe(ANY_AUDIENCE);
    expect(verifier.verify(token({ aud: 'anything' })).valid).toBe(true);
    expect(verifier.verify(token({})).valid).toBe(true);
    expect(verifier.verify(token({ aud: 'anything' }), { audience: 'api' })).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
  });

  it('checks its issuer when given one', () => {
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE, issuer: 'https://auth.example' });
    expect(verifier.verify(token({ iss: 'https://auth.example' })).valid).toBe(true);
    expect(verifier.verify(token({ iss: 'https://other.example' }))).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
    expect(verifier.verify(token({ iss: 'https://other.example' }), { issuer: '' })).toMatchObject({
      valid: false,
      reason: 'ISSUER_MISMATCH',
    });
  });
});
