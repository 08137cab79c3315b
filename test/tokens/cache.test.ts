/**
 * The verification cache, observed through the public API: a cache hit returns the very
 * same frozen payload object, a full verification a new one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  type KeySet,
  type VerifiedToken,
  createSigner,
  createVerifier,
  exportKeys,
  generateKeys,
  importKeys,
} from '../../src/lib/index.js';
import { activeKid, expectReason, expectValid, flipChar, tokenFor } from './helpers.js';

const T0 = 1_900_000_000;

let keys: KeySet;

beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['HS256', 'ES256', 'EdDSA'] });
});

/** A verifier with an injected clock that the test moves. */
function clockedVerifier(maxEntries: number, set: KeySet = keys) {
  const clock = { now: T0 };
  const verifier = createVerifier(set, { audience: ANY_AUDIENCE, cache: { maxEntries }, clock: () => clock.now, clockToleranceSeconds: 5 });
  return { verifier, clock };
}

function sign(sub: string, extra: Record<string, unknown> = {}, set: KeySet = keys, alg = 'ES256'): string {
  return createSigner(set).sign(alg, { sub, iat: T0, exp: T0 + 600, ...extra }).token;
}

describe('cache hits', () => {
  it('a repeated token is served from the cache: the same frozen payload object', () => {
    const { verifier } = clockedVerifier(10);
    const token = sign('ada');
    const first = expectValid(verifier.verify(token));
    const second = expectValid(verifier.verify(token));
    expect(second.payload).toBe(first.payload);
    expect(Object.isFrozen(second.payload)).toBe(true);
    expect(second.payload.sub).toBe('ada');
  });

  it('control: without the cache, or through verifyUncached, each call builds a new payload', () => {
    const token = sign('ada');
    const uncached = createVerifier(keys, { audience: ANY_AUDIENCE, cache: false, clock: () => T0 });
    expect(expectValid(uncached.verify(token)).payload).not.toBe(expectValid(uncached.verify(token)).payload);

    const { verifier } = clockedVerifier(10);
    const cached = expectValid(verifier.verify(token));
    expect(expectValid(verifier.verifyUncached(token)).payload).not.toBe(cached.payload);
    // verifyUncached neither read nor filled it: the cached entry is still the first one.
    expect(expectValid(verifier.verify(token)).payload).toBe(cached.payload);
  });

  it('two verifiers do not share a cache', () => {
    const token = sign('ada');
    const one = clockedVerifier(10).verifier;
    const two = clockedVerifier(10).verifier;
    expect(expectValid(one.verify(token)).payload).not.toBe(expectValid(two.verify(token)).payload);
  });
});

describe('time and claims are checked on every hit', () => {
  it('a cached token is not served past its exp', () => {
    const { verifier, clock } = clockedVerifier(10);
    const token = sign('ada');
    const first = expectValid(verifier.verify(token));
    clock.now = T0 + 600 + 4; // still inside the 5 s tolerance
    expect(expectValid(verifier.verify(token)).payload).toBe(first.payload);
    clock.now = T0 + 600 + 5;
    expectReason(verifier.verify(token), 'EXPIRED');
    clock.now = T0 + 10_000;
    expectReason(verifier.verify(token), 'EXPIRED');
  });

  it('a token that is not valid yet becomes valid when the clock reaches nbf', () => {
    const { verifier, clock } = clockedVerifier(10);
    const token = sign('ada', { nbf: T0 + 100 });
    expectReason(verifier.verify(token), 'NOT_YET_VALID');
    expectReason(verifier.verify(token), 'NOT_YET_VALID');
    clock.now = T0 + 95;
    expectValid(verifier.verify(token));
  });

  it('aud and iss are checked on a cache hit', () => {
    const { verifier } = clockedVerifier(10);
    const token = sign('ada', { aud: ['api', 'web'], iss: 'jwt-grpc' });
    const first = expectValid(verifier.verify(token));
    expectReason(verifier.verify(token, { audience: 'admin' }), 'AUDIENCE_MISMATCH');
    expectReason(verifier.verify(token, { issuer: 'someone-else' }), 'ISSUER_MISMATCH');
    // The hit path really served these: a matching request still gets the cached object.
    const hit = expectValid(verifier.verify(token, { audience: 'web', issuer: 'jwt-grpc' }));
    expect(hit.payload).toBe(first.payload);
  });

  it('a first verification that fails on aud does not make a later, matching one fail', () => {
    const { verifier } = clockedVerifier(10);
    const token = sign('ada', { aud: 'api' });
    expectReason(verifier.verify(token, { audience: 'web' }), 'AUDIENCE_MISMATCH');
    expectValid(verifier.verify(token, { audience: 'api' }));
    expectReason(verifier.verify(token, { audience: 'web' }), 'AUDIENCE_MISMATCH');
  });
});

describe('the bound', () => {
  it('with maxEntries 2, three distinct tokens push the first out: it is verified fully again', () => {
    const { verifier } = clockedVerifier(2);
    const [a, b, c] = [sign('a'), sign('b'), sign('c')];
    const firstA = expectValid(verifier.verify(a));
    expectValid(verifier.verify(b));
    expectValid(verifier.verify(c));
    const againA = expectValid(verifier.verify(a));
    expect(againA.payload).not.toBe(firstA.payload);
    expect(againA.payload).toEqual(firstA.payload);
    // ...and is cached again.
    expect(expectValid(verifier.verify(a)).payload).toBe(againA.payload);
  });

  it('control: with maxEntries 3 the same sequence keeps the first', () => {
    const { verifier } = clockedVerifier(3);
    const [a, b, c] = [sign('a'), sign('b'), sign('c')];
    const firstA = expectValid(verifier.verify(a));
    expectValid(verifier.verify(b));
    expectValid(verifier.verify(c));
    expect(expectValid(verifier.verify(a)).payload).toBe(firstA.payload);
  });

  it('the bound holds over many tokens: the early ones are all gone', () => {
    const { verifier } = clockedVerifier(4);
    const tokens = Array.from({ length: 12 }, (_, i) => sign(`user-${i}`));
    const first = tokens.map((t) => expectValid(verifier.verify(t)));
    // The last four are cached, the first eight are not.
    for (let i = 8; i < 12; i++) expect(expectValid(verifier.verify(tokens[i] as string)).payload).toBe(first[i]?.payload);
    for (let i = 0; i < 4; i++) expect(expectValid(verifier.verify(tokens[i] as string)).payload).not.toBe(first[i]?.payload);
  });
});

describe('failed tokens are never cached', () => {
  // A one-entry cache: any failed token stored would push `a` out.
  it('bad signatures and malformed tokens take no cache slot', () => {
    const { verifier } = clockedVerifier(1);
    const a = sign('a');
    const firstA = expectValid(verifier.verify(a));
    const [h, p, s] = sign('b').split('.') as [string, string, string];
    const bad = [
      `${h}.${p}.${flipChar(s, 0)}`,
      `${h}.${p}.`,
      `${h}.${p}`,
      tokenFor(keys, activeKid(keys, 'ES256'), { exp: T0 + 60 }, { kid: 'no-such-kid' }),
    ];
    for (const token of bad) {
      expect(verifier.verify(token).valid).toBe(false);
      expect(verifier.verify(token).valid).toBe(false);
    }
    // Had any of them been cached, the one-entry cache would have dropped a.
    expect(expectValid(verifier.verify(a)).payload).toBe(firstA.payload);
  });

  it('an expired token takes no cache slot', () => {
    const { verifier } = clockedVerifier(1);
    const a = sign('a');
    const firstA = expectValid(verifier.verify(a));
    for (const sub of ['x', 'y', 'z']) {
      const expired = createSigner(keys).sign('ES256', { sub, exp: T0 - 60 }).token;
      expectReason(verifier.verify(expired), 'EXPIRED');
    }
    expect(expectValid(verifier.verify(a)).payload).toBe(firstA.payload);
  });

  it('genuine tokens failing nbf, iat, aud or iss take no cache slot either', () => {
    const { verifier } = clockedVerifier(1);
    const a = sign('a');
    const firstA = expectValid(verifier.verify(a));
    expectReason(verifier.verify(sign('x', { nbf: T0 + 60 })), 'NOT_YET_VALID');
    expectReason(verifier.verify(sign('y', { iat: T0 + 60 })), 'NOT_YET_VALID');
    expectReason(verifier.verify(sign('z', { aud: 'web' }), { audience: 'api' }), 'AUDIENCE_MISMATCH');
    expectReason(verifier.verify(sign('w', { iss: 'evil' }), { issuer: 'jwt-grpc' }), 'ISSUER_MISMATCH');
    expect(expectValid(verifier.verify(a)).payload).toBe(firstA.payload);
  });

  it('a tampered copy of a cached token is not served from the cache', () => {
    const { verifier } = clockedVerifier(10);
    const token = sign('ada', { role: 'user' });
    expectValid(verifier.verify(token));
    const [h, , s] = token.split('.') as [string, string, string];
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'ada', iat: T0, exp: T0 + 600, role: 'admin' })).toString('base64url')}.${s}`;
    expectReason(verifier.verify(forged), 'BAD_SIGNATURE');
  });
});

describe('rotation', () => {
  let oldKeys: KeySet;
  let newKeys: KeySet;
  beforeAll(async () => {
    [oldKeys, newKeys] = await Promise.all([
      generateKeys({ algorithms: ['ES256', 'HS256'] }),
      generateKeys({ algorithms: ['ES256', 'HS256'] }),
    ]);
  });

  const full = (set: KeySet) => exportKeys(set, { includePrivate: true }).keys;

  it('a new verifier over the rotated set (new key first, old after) verifies old and new tokens', () => {
    const rotated = importKeys({ keys: [...full(newKeys), ...full(oldKeys)] });
    for (const alg of ['ES256', 'HS256'] as const) {
      expect(activeKid(rotated, alg)).toBe(activeKid(newKeys, alg));
      const oldToken = sign('old', {}, oldKeys, alg);
      const newToken = sign('new', {}, rotated, alg);
      const { verifier } = clockedVerifier(10, rotated);
      expect(expectValid(verifier.verify(oldToken)).kid).toBe(activeKid(oldKeys, alg));
      expect(expectValid(verifier.verify(newToken)).kid).toBe(activeKid(newKeys, alg));
      // The verifier over the old set alone does not know the new key.
      expectReason(clockedVerifier(10, oldKeys).verifier.verify(newToken), 'UNKNOWN_KEY');
    }
  });

  it('once the old key is removed, its tokens fail UNKNOWN_KEY, even when an earlier verifier had cached them', () => {
    const rotated = importKeys({ keys: [...full(newKeys), ...full(oldKeys)] });
    const oldToken = sign('old', {}, oldKeys, 'ES256');
    const before = clockedVerifier(10, rotated).verifier;
    expectValid(before.verify(oldToken));
    expectValid(before.verify(oldToken));

    const retired = importKeys({ keys: full(newKeys) });
    const after = clockedVerifier(10, retired).verifier;
    expectReason(after.verify(oldToken), 'UNKNOWN_KEY');
    expectValid(after.verify(sign('new', {}, retired, 'ES256')));
  });
});

describe('cache options', () => {
  it.each([{ maxEntries: -1 }, { maxEntries: 1.5 }, { maxEntries: Number.NaN }, { maxEntries: 10_000_001 }])(
    'cache %j is ERR_INVALID_OPTION',
    (cache) => {
      expect(() => createVerifier(keys, { audience: ANY_AUDIENCE, cache })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_OPTION' }),
      );
    },
  );

  it('maxEntries 1 caches exactly one token', () => {
    const { verifier } = clockedVerifier(1);
    const [a, b] = [sign('a'), sign('b')];
    const firstA: VerifiedToken = expectValid(verifier.verify(a));
    expect(expectValid(verifier.verify(a)).payload).toBe(firstA.payload);
    expectValid(verifier.verify(b));
    expect(expectValid(verifier.verify(a)).payload).not.toBe(firstA.payload);
  });
});
