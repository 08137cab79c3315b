/**
 * createTokenSource: options are checked at creation (claims must survive JSON, reserved claims
 * are the issuer's); a token is fetched once, shared by concurrent callers, refreshed in the
 * background before it expires, and an issuer's refusal becomes a call error whose code says
 * whether retrying can help.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type TokenIssuer, createTokenSource } from '../../src/client/token-source.js';
import { GrpcStatus, GrpcStatusError } from '../../src/contracts/handler-api.js';

const quiet = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };

function issuer(answer: (n: number) => Promise<{ jwt: string; expires_at: number }>): TokenIssuer & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    target: 'issuer:443',
    calls,
    generateJwt: (request: unknown) => {
      calls.push(request);
      return answer(calls.length);
    },
  } as never;
}
const nowS = (): number => Math.floor(Date.now() / 1000);

afterEach(() => {
  vi.useRealTimers();
});

describe('createTokenSource options', () => {
  it('sends the algorithm, subject, audience, ttl and claims as the issuer reads them', async () => {
    const client = issuer(async (n) => ({ jwt: `t${n}`, expires_at: nowS() + 3600 }));
    const source = createTokenSource(client, {
      algorithm: 'ES256',
      subject: 'svc',
      audience: 'api',
      ttlSeconds: 300,
      claims: { scope: 'read' },
      logger: quiet,
    });
    expect(await source.token()).toBe('t1');
    expect(client.calls).toEqual([
      { algorithm: 'ES256', subject: 'svc', audience: 'api', ttl_seconds: 300, claims_json: '{"scope":"read"}' },
    ]);
  });

  it('sends empty strings and 0 for what is not given, and no claims_json for empty claims', async () => {
    const client = issuer(async () => ({ jwt: 't', expires_at: nowS() + 3600 }));
    await createTokenSource(client, { algorithm: 'ES256', claims: {}, logger: quiet }).token();
    expect(client.calls).toEqual([{ algorithm: 'ES256', subject: '', audience: '', ttl_seconds: 0, claims_json: '' }]);
  });

  it.each([
    [{ algorithm: 'none' }, 'algorithm', /^option algorithm: must be one of .*ES256.*, got "none"$/],
    [{ algorithm: 'ES256', ttlSeconds: -1 }, 'ttlSeconds', /must be an integer from 0 to 315360000, got -1/],
    [{ algorithm: 'ES256', refreshBeforeSeconds: 86_401 }, 'refreshBeforeSeconds', /must be an integer from 0 to 86400/],
    [{ algorithm: 'ES256', subject: '' }, 'subject', /must be a non-empty string/],
    [{ algorithm: 'ES256', claims: [] }, 'claims', /^option claims: must be a plain object of claim names to values$/],
    [{ algorithm: 'ES256', claims: new Map() }, 'claims', /must be a plain object/],
    [{ algorithm: 'ES256', claims: { sub: 'x' } }, 'claims.sub', /^option claims\.sub: is set by the issuer/],
    [{ algorithm: 'ES256', claims: { status: {} } }, 'claims.status', /is set by the issuer/],
    [
      { algorithm: 'ES256', claims: { n: Number.NaN } },
      'claims',
      /^option claims: claims\.n is NaN, which JSON writes as null: claims must survive JSON unchanged$/,
    ],
    [{ algorithm: 'ES256', claims: { a: [1, undefined] } }, 'claims', /claims\.a\[1\] is undefined, which JSON cannot carry/],
    [{ algorithm: 'ES256', claims: { f: () => 1 } }, 'claims', /claims\.f is a function, which JSON cannot carry/],
    [{ algorithm: 'ES256', claims: { d: new Date(0) } }, 'claims', /claims\.d is not a plain object \(JSON would rewrite it\)/],
    [{ algorithm: 'ES256', claims: { o: { [Symbol('s')]: 1 } } }, 'claims', /claims\.o has a symbol key, which JSON drops/],
    [{ algorithm: 'ES256', claims: { big: 1n } }, 'claims', /claims\.big is a bigint/],
  ])('refuses %o naming %s', (options, field, message) => {
    expect(() =>
      createTokenSource(
        issuer(async () => ({ jwt: 't', expires_at: 0 })),
        { logger: quiet, ...options } as never,
      ),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field, message: expect.stringMatching(message) }));
  });

  it('refuses a client without generateJwt and an unknown option', () => {
    expect(() => createTokenSource({} as TokenIssuer, { algorithm: 'ES256' })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'client',
        message: 'option client: must be a JwtClient (createJwtClient)',
      }),
    );
    expect(() =>
      createTokenSource(
        issuer(async () => ({ jwt: 't', expires_at: 0 })),
        { algorithm: 'ES256', subjekt: 'x' } as never,
      ),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION' }));
  });
});

describe('token()', () => {
  it('fetches once for concurrent callers and reuses the token until its refresh time', async () => {
    const client = issuer(async (n) => ({ jwt: `t${n}`, expires_at: nowS() + 3600 }));
    const source = createTokenSource(client, { algorithm: 'ES256', logger: quiet });
    expect(await Promise.all([source.token(), source.token(), source.token()])).toEqual(['t1', 't1', 't1']);
    expect(await source.token()).toBe('t1');
    expect(client.calls).toHaveLength(1);
  });

  it('refreshes in the background after refreshAt, sending the held token meanwhile', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const client = issuer(async (n) => ({ jwt: `t${n}`, expires_at: nowS() + 3600 }));
    const source = createTokenSource(client, { algorithm: 'ES256', refreshBeforeSeconds: 60, logger: quiet });
    expect(await source.token()).toBe('t1');
    vi.setSystemTime(Date.now() + 3550_000);
    expect(await source.token()).toBe('t1');
    await vi.waitFor(() => expect(client.calls).toHaveLength(2));
    expect(await source.token()).toBe('t2');
  });

  it('refreshes a short-lived token at half its life, not on every call', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const client = issuer(async (n) => ({ jwt: `t${n}`, expires_at: nowS() + 100 }));
    const source = createTokenSource(client, { algorithm: 'ES256', refreshBeforeSeconds: 3600, logger: quiet });
    await source.token();
    vi.setSystemTime(Date.now() + 40_000);
    await source.token();
    expect(client.calls).toHaveLength(1);
    vi.setSystemTime(Date.now() + 20_000);
    await source.token();
    await vi.waitFor(() => expect(client.calls).toHaveLength(2));
  });

  it('fetches anew, waiting, once the held token has expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const client = issuer(async (n) => ({ jwt: `t${n}`, expires_at: nowS() + 100 }));
    const source = createTokenSource(client, { algorithm: 'ES256', logger: quiet });
    await source.token();
    vi.setSystemTime(Date.now() + 100_000);
    expect(await source.token()).toBe('t2');
  });

  it('logs a failed background refresh and keeps sending the held token, retrying no sooner than retryMs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // On a whole second: expires_at is in whole seconds, so the logged expiresInSeconds is exact.
    vi.setSystemTime(Math.ceil(Date.now() / 1000) * 1000);
    const warn = vi.fn();
    const client = issuer(async (n) => {
      if (n > 1) throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'down');
      return { jwt: 't1', expires_at: nowS() + 3600 };
    });
    const source = createTokenSource(client, { algorithm: 'ES256', logger: { ...quiet, warn } });
    await source.token();
    vi.setSystemTime(Date.now() + 3550_000);
    expect(await source.token()).toBe('t1');
    await vi.waitFor(() => expect(warn).toHaveBeenCalledTimes(1));
    expect(warn).toHaveBeenCalledWith('token refresh failed; the current token is sent until it expires', {
      issuer: 'issuer:443',
      error: 'cannot get a token from issuer issuer:443: UNAVAILABLE: down',
      expiresInSeconds: 50,
    });
    expect(await source.token()).toBe('t1');
    expect(client.calls).toHaveLength(2);
    vi.setSystemTime(Date.now() + 1_000);
    await source.token();
    await vi.waitFor(() => expect(client.calls).toHaveLength(3));
  });

  it.each([
    [GrpcStatus.PERMISSION_DENIED, GrpcStatus.PERMISSION_DENIED],
    [GrpcStatus.UNAUTHENTICATED, GrpcStatus.UNAUTHENTICATED],
    [GrpcStatus.INVALID_ARGUMENT, GrpcStatus.UNAUTHENTICATED],
    [GrpcStatus.UNIMPLEMENTED, GrpcStatus.UNAUTHENTICATED],
    [GrpcStatus.UNAVAILABLE, GrpcStatus.UNAVAILABLE],
    [GrpcStatus.INTERNAL, GrpcStatus.UNAVAILABLE],
  ])('an issuer status %i fails the call with code %i, naming the issuer and the status', async (from, code) => {
    const cause = new GrpcStatusError(from as never, 'nope');
    const source = createTokenSource(
      issuer(() => Promise.reject(cause)),
      { algorithm: 'ES256', logger: quiet },
    );
    await expect(source.token()).rejects.toMatchObject({
      code,
      cause,
      message: expect.stringMatching(/^cannot get a token from issuer issuer:443: [A-Z_]+: nope$/),
    });
  });

  it('a plain failure (no status) is UNAVAILABLE with its message', async () => {
    const source = createTokenSource(
      issuer(() => Promise.reject(new Error('ECONNREFUSED'))),
      { algorithm: 'ES256', logger: quiet },
    );
    await expect(source.token()).rejects.toMatchObject({
      code: GrpcStatus.UNAVAILABLE,
      message: 'cannot get a token from issuer issuer:443: ECONNREFUSED',
    });
  });
});
