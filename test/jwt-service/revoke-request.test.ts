/**
 * revocationOf: a RevokeJwt request becomes a revocation, by a token of this server that verifies
 * or by jti and expires_at within the lifetimes this server issues; anything else is
 * ERR_INVALID_REQUEST saying what to give.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { revocationOf } from '../../src/jwt-service/revoke-request.js';
import type { RevokeJwtRequest } from '../../src/jwt-service/messages.js';
import { ANY_AUDIENCE, type KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib/index.js';
import type { KeyVerifier } from '../../src/tokens/verify.js';

let keys: KeySet;
let verifier: KeyVerifier;
beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256'] });
  verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
});
const OPTIONS = { clockToleranceSeconds: 30, maxTokenLength: 2048, maxTtlSeconds: 3600 };
const now = (): number => Math.floor(Date.now() / 1000);
const sign = (claims: Record<string, unknown>): string =>
  createSigner(keys).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 600, ...claims }).token;
const req = (more: Partial<RevokeJwtRequest>): RevokeJwtRequest => ({ jwt: '', jti: '', expires_at: 0, reason: '', ...more });
const refused = (message: string | RegExp) =>
  expect.objectContaining({ code: 'ERR_INVALID_REQUEST', message: typeof message === 'string' ? message : expect.stringMatching(message) });

describe('revocationOf by token', () => {
  it("revokes the token's jti until its exp plus the tolerance, with its status-list index and the reason", () => {
    const exp = now() + 600;
    const jwt = sign({ jti: 'j1', exp, status: { status_list: { idx: 7, uri: 'https://s' } } });
    expect(revocationOf(req({ jwt, reason: 'lost' }), verifier, OPTIONS, now())).toEqual({
      jti: 'j1',
      expiresAt: exp + 30,
      reason: 'lost',
      statusIndex: 7,
    });
  });

  it('takes the index from the given reader, and none from a negative or missing idx', () => {
    const jwt = sign({ jti: 'j1', status: { status_list: { idx: -1 } } });
    expect(revocationOf(req({ jwt }), verifier, OPTIONS, now())).not.toHaveProperty('statusIndex');
    expect(revocationOf(req({ jwt }), verifier, OPTIONS, now(), () => 3)).toMatchObject({ statusIndex: 3 });
  });

  it.each([
    [{ jti: 'j' }, 'give jwt, or jti and expires_at, not both'],
    [{ expires_at: 5 }, 'give jwt, or jti and expires_at, not both'],
  ])('refuses a token given with %j', (more, message) => {
    expect(() => revocationOf(req({ jwt: sign({ jti: 'j1' }), ...more }), verifier, OPTIONS, now())).toThrow(refused(message));
  });

  it('refuses a token too long, one that does not verify, and one without a usable jti', () => {
    expect(() => revocationOf(req({ jwt: 'x'.repeat(2049) }), verifier, OPTIONS, now())).toThrow(
      refused('jwt: is 2049 characters; the limit is 2048 (option maxTokenLength)'),
    );
    expect(() => revocationOf(req({ jwt: 'a.b.c' }), verifier, OPTIONS, now())).toThrow(
      refused(/^jwt: does not verify \(MALFORMED: .*\); a token that does not verify cannot be revoked$/),
    );
    expect(() => revocationOf(req({ jwt: sign({}) }), verifier, OPTIONS, now())).toThrow(
      refused('jwt: has no jti claim (issued with jti off), so it cannot be revoked'),
    );
    expect(() => revocationOf(req({ jwt: sign({ jti: 'j'.repeat(257) }) }), verifier, OPTIONS, now())).toThrow(
      refused('jwt: its jti is longer than 256 characters'),
    );
  });
});

describe('revocationOf by jti', () => {
  it('revokes a jti until expires_at plus the tolerance', () => {
    const t = now();
    expect(revocationOf(req({ jti: 'j2', expires_at: t + 60 }), verifier, OPTIONS, t)).toEqual({ jti: 'j2', expiresAt: t + 90 });
  });

  it('takes an expires_at just inside the tolerance and at the longest lifetime', () => {
    const t = now();
    expect(() => revocationOf(req({ jti: 'j', expires_at: t - 29 }), verifier, OPTIONS, t)).not.toThrow();
    expect(() => revocationOf(req({ jti: 'j', expires_at: t + 3630 }), verifier, OPTIONS, t)).not.toThrow();
  });

  it.each([
    [{}, 'give jwt, or jti and expires_at'],
    [{ jti: 'j'.repeat(257), expires_at: 1 }, 'jti: is longer than 256 characters'],
    [{ jti: 'j' }, "expires_at: is required with jti: the token's exp, seconds since the Unix epoch"],
    [{ jti: 'j', expires_at: -5 }, "expires_at: is required with jti: the token's exp, seconds since the Unix epoch"],
    [{ jti: 'j', expires_at: 1000 - 30 }, 'expires_at: has passed; the token has expired already'],
    [
      { jti: 'j', expires_at: 1000 + 3631 },
      'expires_at: is more than maxTtlSeconds (3600) from now; no token of this server lives that long',
    ],
    [{ jti: 'j', expires_at: 2000, reason: 'r'.repeat(257) }, 'reason: is longer than 256 characters'],
  ])('refuses %j', (more, message) => {
    expect(() => revocationOf(req(more), verifier, OPTIONS, 1000)).toThrow(refused(message));
  });
});
