/**
 * The issuance policy (src/policy/enforce.ts): a caller gets only what its entry allows;
 * every denial is ERR_PERMISSION_DENIED (answered PERMISSION_DENIED) naming the rule, the caller and what was asked;
 * a caller over its rate is ERR_RATE_LIMITED (answered RESOURCE_EXHAUSTED) naming the rate, and no other caller pays for it.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IssuancePolicy, PolicyDenied, RateLimited } from '../../src/policy/enforce.js';
import { checkPolicy } from '../../src/policy/document.js';

const policy = new IssuancePolicy(
  checkPolicy({
    callers: {
      orders: { subjects: ['orders', 'user:*'], audiences: ['api', 'svc-*'], algorithms: ['ES256'], maxTtlSeconds: 600, claims: ['scope'] },
      wild: { subjects: ['*'], audiences: ['*'] },
      open: { subjects: ['user:*'] },
    },
  }),
);

const caller = (id: string | undefined) => ({ id, certificate: Buffer.alloc(0), thumbprint: '' }) as never;
const request = { algorithm: 'ES256', subject: 'orders', audience: 'api', ttl_seconds: 0 };

function denial(fn: () => unknown): PolicyDenied {
  try {
    fn();
  } catch (err) {
    return err as PolicyDenied;
  }
  throw new Error('not denied');
}

describe('IssuancePolicy.authorize', () => {
  it('grants what the entry allows: patterns, the fixed subject for an empty one, the ttl capped by maxTtlSeconds', () => {
    expect(policy.authorize(caller('orders'), request, 3600)).toEqual({
      callerId: 'orders',
      entry: policy.policy.callers['orders'],
      request: { ...request, ttl_seconds: 600 },
    });
    expect(
      policy.authorize(caller('orders'), { ...request, subject: 'user:42', audience: 'svc-billing', ttl_seconds: 60 }, 3600).request,
    ).toMatchObject({
      subject: 'user:42',
      ttl_seconds: 60,
    });
    expect(policy.authorize(caller('orders'), { ...request, subject: '' }, 300).request).toMatchObject({
      subject: 'orders',
      ttl_seconds: 300,
    });
    expect(
      policy.authorize(caller('wild'), { ...request, subject: 'anyone', audience: '', algorithm: 'HS256', ttl_seconds: 99999 }, 300).request
        .ttl_seconds,
    ).toBe(99999);
  });

  it.each([
    [undefined, request, 'caller', 'policy rule "caller": the call has no verified client certificate (serve mutual TLS)'],
    ['-', request, 'caller', 'policy rule "caller": the client certificate names no URI or DNS SAN'],
    ['stranger', request, 'caller', 'policy rule "caller": caller stranger is not in the policy'],
    ['orders', { ...request, subject: 'admin' }, 'subjects', 'policy rule "subjects": caller orders may not get subject "admin"'],
    [
      'open',
      { ...request, subject: '' },
      'subjects',
      'policy rule "subjects": the request names no subject and caller open has none without "*"',
    ],
    ['orders', { ...request, audience: 'apix' }, 'audiences', 'policy rule "audiences": caller orders may not get audience "apix"'],
    ['orders', { ...request, audience: '' }, 'audiences', 'policy rule "audiences": caller orders may not get a token without an audience'],
    ['orders', { ...request, algorithm: 'HS256' }, 'algorithms', 'policy rule "algorithms": caller orders may not get algorithm "HS256"'],
    [
      'orders',
      { ...request, ttl_seconds: 601 },
      'maxTtlSeconds',
      'policy rule "maxTtlSeconds": caller orders may get tokens of at most 600 s, asked for 601 s',
    ],
  ])('denies caller %s %j: %s', (id, asked, rule, message) => {
    const who = id === undefined ? undefined : caller(id === '-' ? undefined : id);
    const err = denial(() => policy.authorize(who, asked, 3600));
    expect(err).toBeInstanceOf(PolicyDenied);
    expect(err).toMatchObject({ rule, code: 'ERR_PERMISSION_DENIED', message });
  });

  it('lets a caller without audiences ask for none', () => {
    expect(policy.authorize(caller('open'), { ...request, subject: 'user:1', audience: '' }, 60).request.audience).toBe('');
    expect(policy.authorize(caller('open'), { ...request, subject: 'user:1', audience: 'anything' }, 60).request.audience).toBe('anything');
  });
});

describe('IssuancePolicy.checkClaims', () => {
  it('allows the service’s own claims and the listed ones, and denies any other by name', () => {
    const granted = policy.authorize(caller('orders'), request, 60);
    expect(() => policy.checkClaims(granted, { sub: 'x', exp: 1, iat: 1, jti: 'j', iss: 'i', aud: 'a', scope: 'read' })).not.toThrow();
    expect(denial(() => policy.checkClaims(granted, { scope: 'read', admin: true }))).toMatchObject({
      rule: 'claims',
      callerId: 'orders',
      code: 'ERR_PERMISSION_DENIED',
      message: 'policy rule "claims": caller orders may not set claim "admin"',
    });
    const wild = policy.authorize(caller('wild'), request, 60);
    expect(denial(() => policy.checkClaims(wild, { scope: 'read' }))).toMatchObject({ rule: 'claims' });
  });
});

describe('IssuancePolicy rates', () => {
  /** The monotonic clock the buckets read, moved by hand. */
  let nowMs = 0;
  beforeEach(() => {
    nowMs = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => nowMs);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** How many of `n` calls by `id` the policy grants now. */
  const granted = (rated: IssuancePolicy, id: string, n: number): number => {
    let count = 0;
    for (let i = 0; i < n; i++) {
      try {
        rated.authorize(caller(id), { ...request, subject: id }, 60);
        count++;
      } catch (err) {
        expect(err).toBeInstanceOf(RateLimited);
      }
    }
    return count;
  };

  it('gives a caller without a rate the default, a burst of 1000 then 100 a second, and refuses it alone beyond', () => {
    const rated = new IssuancePolicy(checkPolicy({ callers: { busy: { subjects: ['busy'] }, calm: { subjects: ['calm'] } } }));
    expect(granted(rated, 'busy', 1500)).toBe(1000);
    const err = denial(() => rated.authorize(caller('busy'), { ...request, subject: 'busy' }, 60));
    expect(err).toMatchObject({
      code: 'ERR_RATE_LIMITED',
      rule: 'rate',
      callerId: 'busy',
      message: 'policy rule "rate": caller busy is over its rate (100 tokens/s, burst 1000); retry later',
    });
    expect(granted(rated, 'calm', 10)).toBe(10);
    nowMs += 1000;
    expect(granted(rated, 'busy', 500)).toBe(100);
  });

  it("applies a caller's own rate, else the policy's defaultRate, and counts only requests it would sign", () => {
    const rated = new IssuancePolicy(
      checkPolicy({
        defaultRate: { perSecond: 0.5, burst: 2 },
        callers: { own: { subjects: ['own'], audiences: ['api'], rate: { perSecond: 10, burst: 3 } }, other: { subjects: ['other'] } },
      }),
    );
    // A refused audience takes no token.
    for (let i = 0; i < 5; i++) denial(() => rated.authorize(caller('own'), { ...request, subject: 'own', audience: 'elsewhere' }, 60));
    expect(granted(rated, 'own', 10)).toBe(3);
    expect(granted(rated, 'other', 10)).toBe(2);
    nowMs += 2000;
    expect([granted(rated, 'own', 50), granted(rated, 'other', 10)]).toEqual([3, 1]);
  });

  it('keeps what is left of each bucket when a new policy replaces it: a reload hands out no fresh burst', () => {
    const entry = { subjects: ['a'], rate: { perSecond: 1, burst: 5 } };
    const first = new IssuancePolicy(checkPolicy({ callers: { a: entry } }));
    expect(granted(first, 'a', 5)).toBe(5);
    const second = new IssuancePolicy(checkPolicy({ callers: { a: entry, b: { subjects: ['b'] } } }), first);
    expect(granted(second, 'a', 5)).toBe(0);
    expect(granted(second, 'b', 5)).toBe(5);
  });
});
