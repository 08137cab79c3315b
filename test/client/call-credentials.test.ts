/** jwtCallCredentials over TLS: when it asks the issuer for a token, and how a call fails when it cannot get one. */
import { credentials, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  GrpcStatusError,
  JwtGrpcError,
  GrpcStatus,
  createJwtClient,
  createJwtServer,
  createVerifier,
  jwtAuthInterceptor,
  jwtCallCredentials,
  silentLogger,
  type TokenVerifier,
} from '../../src/lib/index.js';
import { makeClientCert } from '../../bench/kit/caller-certs.js';
import {
  AS_LOCALHOST,
  certs,
  clientTls,
  counted,
  failure,
  greeterClient,
  HELLO,
  issuerClient,
  issuerTls,
  keys,
  PUBLIC,
  startGreeter,
  startIssuer,
  useTlsFixture,
} from './harness.js';
import { sleep, waitUntil } from '../../bench/kit/wait.js';

useTlsFixture();

async function scene(tokenOptions: { ttlSeconds?: number; refreshBeforeSeconds?: number; algorithm?: string }) {
  const issuer = await startIssuer(certs, { keys });
  // Keys in hand: a createVerifier verifier serves the interceptor as well as a remote one.
  const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))]);
  const tokens = counted(issuerClient(certs, issuer.target));
  const auth = jwtCallCredentials(tokens.client, { algorithm: 'ES256', subject: 'svc', logger: silentLogger, ...tokenOptions });
  const caller = greeterClient(greeter.target, credentials.combineChannelCredentials(clientTls(certs), auth));
  return { issuer, greeter, tokens, caller };
}

/**
 * A greeter whose verifier refuses the tokens in `refused` (as a revocation does), and a
 * caller whose credentials' interceptor is given to its client or not.
 */
async function refusingScene(withInterceptor: boolean) {
  const issuer = await startIssuer(certs, { keys });
  const local = createVerifier(keys, { audience: ANY_AUDIENCE });
  const refused = new Set<string>();
  const verifier: TokenVerifier = {
    audience: ANY_AUDIENCE,
    verify: (token: string) => (refused.has(token) ? failed('REVOKED', 'token revoked') : local.verify(token)),
  };
  const greeter = await startGreeter(certs, [jwtAuthInterceptor(verifier)]);
  const tokens = counted(issuerClient(certs, issuer.target));
  const auth = jwtCallCredentials(tokens.client, { algorithm: 'ES256', subject: 'svc', logger: silentLogger });
  const channel = credentials.combineChannelCredentials(clientTls(certs), auth);
  const caller = greeterClient(greeter.target, channel, withInterceptor ? [auth.interceptor] : []);
  return { greeter, tokens, caller, refused, auth };
}

/** A refusal as a verifier gives it. */
const failed = (reason: 'REVOKED', message: string) => ({ valid: false as const, reason, message });

describe('jwtCallCredentials when the service refuses its token', () => {
  it('with its interceptor: the refused call fails, the next one carries a fresh token and passes', async () => {
    const s = await refusingScene(true);
    await s.caller.hello();
    const [first] = s.greeter.tokens;
    s.refused.add((first as string).replace(/^Bearer /, ''));
    expect((await failure(s.caller.hello())).code).toBe(status.UNAUTHENTICATED);
    expect(s.tokens.calls.generateJwt).toBe(1); // the refused call is not repeated
    expect((await s.caller.hello()).message).toBe('hello svc');
    expect(s.tokens.calls.generateJwt).toBe(2);
    expect([...s.greeter.tokens].length).toBe(2);
  });

  it('without it, the refused token is sent until its refresh point; invalidate() drops it', async () => {
    const s = await refusingScene(false);
    await s.caller.hello();
    s.refused.add(([...s.greeter.tokens][0] as string).replace(/^Bearer /, ''));
    for (let i = 0; i < 3; i++) expect((await failure(s.caller.hello())).code).toBe(status.UNAUTHENTICATED);
    expect(s.tokens.calls.generateJwt).toBe(1);
    s.auth.invalidate();
    expect((await s.caller.hello()).message).toBe('hello svc');
    expect(s.tokens.calls.generateJwt).toBe(2);
  });

  it('a service that refuses every token costs the issuer at most one GenerateJwt a second, not one a call', async () => {
    const s = await refusingScene(true);
    await s.caller.hello();
    const refuseAll = (): void => {
      for (const token of s.greeter.tokens) s.refused.add(token.replace(/^Bearer /, ''));
    };
    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      refuseAll();
      await s.caller.hello().catch(() => {});
    }
    const seconds = (Date.now() - started) / 1000;
    expect(s.tokens.calls.generateJwt).toBeLessThanOrEqual(2 + Math.ceil(seconds));
  });
});

describe('jwtCallCredentials', () => {
  it('keeps one token until its refresh point, then replaces it with one background fetch', async () => {
    // 4 s tokens, refreshBeforeSeconds 60: the refresh point is half the lifetime, 2 s.
    const s = await scene({ ttlSeconds: 4 });
    await Promise.all(Array.from({ length: 20 }, () => s.caller.hello()));
    expect(s.tokens.calls.generateJwt).toBe(1);
    await sleep(2200);
    await Promise.all(Array.from({ length: 20 }, () => s.caller.hello()));
    expect(s.tokens.calls.generateJwt).toBe(2);
    await sleep(100);
    await s.caller.hello();
    expect(s.tokens.calls.generateJwt).toBe(2);
    expect(s.greeter.tokens.size).toBe(2);
  });

  it('fails the call with UNAUTHENTICATED (not retryable) naming the issuer when the issuer refuses the request', async () => {
    const s = await scene({ algorithm: 'RS256' });
    const err = await failure(s.caller.hello());
    expect(err.code).toBe(status.UNAUTHENTICATED);
    expect(err.details).toContain(`cannot get a token from issuer ${s.issuer.target}: INVALID_ARGUMENT`);
    expect(s.greeter.handled.count).toBe(0);
  });

  it.each([
    [GrpcStatus.PERMISSION_DENIED, status.PERMISSION_DENIED],
    [GrpcStatus.UNAUTHENTICATED, status.UNAUTHENTICATED],
    [GrpcStatus.FAILED_PRECONDITION, status.UNAUTHENTICATED],
    [GrpcStatus.DEADLINE_EXCEEDED, status.UNAVAILABLE],
    [GrpcStatus.RESOURCE_EXHAUSTED, status.UNAVAILABLE],
    [GrpcStatus.INTERNAL, status.UNAVAILABLE],
  ])('an issuer answering status %i fails the call with status %i', async (answered, expected) => {
    const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))]);
    // Any object with target and generateJwt is an issuer: this one always answers `answered`.
    const issuer = { target: 'issuer.test:443', generateJwt: () => Promise.reject(new GrpcStatusError(answered, 'no')) };
    const auth = jwtCallCredentials(issuer, { algorithm: 'ES256', logger: silentLogger });
    const err = await failure(greeterClient(greeter.target, credentials.combineChannelCredentials(clientTls(certs), auth)).hello());
    expect(err.code).toBe(expected);
    expect(err.details).toContain('cannot get a token from issuer issuer.test:443');
    expect(greeter.handled.count).toBe(0);
  });

  it('asks again after a failure: the same credentials get a token once the issuer is back', async () => {
    const s = await scene({});
    await s.issuer.server.close({ graceMs: 0 });
    const err = await failure(s.caller.hello());
    expect(err.code).toBe(status.UNAVAILABLE);
    expect(err.details).toContain(`cannot get a token from issuer ${s.issuer.target}`);
    const port = Number(s.issuer.target.split(':')[1]);
    const back = createJwtServer({ keys, logger: silentLogger });
    await back.listen(`127.0.0.1:${port}`, issuerTls(certs));
    try {
      // grpc-js redials after its connection backoff (1 s, jittered); calls before that fail fast.
      let reply: { message: string } | undefined;
      await waitUntil(async () => (reply = await s.caller.hello().catch(() => undefined)) !== undefined, 10_000, 200);
      expect(reply?.message).toBe('hello svc');
    } finally {
      await back.close({ graceMs: 0 });
    }
  });

  it('validates its options once, naming the bad one', async () => {
    const client = issuerClient(certs, '127.0.0.1:1');
    const cases: [string, () => unknown][] = [
      ['algorithm', () => jwtCallCredentials(client, { algorithm: 'none' })],
      ['ttlSeconds', () => jwtCallCredentials(client, { algorithm: 'ES256', ttlSeconds: -5 })],
      ['refreshBeforeSeconds', () => jwtCallCredentials(client, { algorithm: 'ES256', refreshBeforeSeconds: 1.5 })],
      ['subject', () => jwtCallCredentials(client, { algorithm: 'ES256', subject: '' })],
      ['client', () => jwtCallCredentials({} as never, { algorithm: 'ES256' })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: 'scope=greet' as never })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: ['greet'] as never })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { scope: undefined } })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { n: Number.NaN } })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { when: new Date() } })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { nested: { big: 1n } } })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { list: [1, () => 2] } })],
      ['claims', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { [Symbol('x')]: 1 } })],
      ['claims.aud', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { aud: 'payroll' } })],
      ['claims.cnf', () => jwtCallCredentials(client, { algorithm: 'ES256', claims: { cnf: {} } })],
    ];
    for (const [field, make] of cases) {
      expect(make).toThrow(JwtGrpcError);
      expect(() => make()).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field }));
    }
  });

  it('asks for extra claims: with claims: { scope } the caller passes a scope rule, without it is refused', async () => {
    const issuer = await startIssuer(certs, { keys });
    const rules = { audience: 'greeter', methods: { [HELLO]: { scopes: ['greet'] }, [PUBLIC]: {} } };
    const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys, { audience: 'greeter' }), rules)]);
    const jwt = issuerClient(certs, issuer.target);
    const caller = (claims?: Record<string, unknown>) =>
      greeterClient(
        greeter.target,
        credentials.combineChannelCredentials(
          clientTls(certs),
          jwtCallCredentials(jwt, { algorithm: 'ES256', subject: 'svc', audience: 'greeter', claims, logger: silentLogger }),
        ),
      );
    const reply = await caller({ scope: 'greet', tenant: { id: 7, tags: ['a', null] } }).hello();
    expect(reply.message).toBe('hello svc');
    expect(JSON.parse(reply.claims_json)).toMatchObject({ scope: 'greet', tenant: { id: 7, tags: ['a', null] } });
    const without = await failure(caller().hello());
    expect([without.code, without.details]).toEqual([status.PERMISSION_DENIED, `${HELLO}: the token lacks scope "greet"`]);
    expect((await caller().public()).message).toBe('hello svc');
  });

  it("the issuer's policy decides which claims a caller may ask for: one it does not allow fails the call PERMISSION_DENIED", async () => {
    const caller = makeClientCert(certs, 'orders', 'URI:spiffe://example.org/ns/shop/sa/orders');
    const policy = { callers: { 'spiffe://example.org/ns/shop/sa/orders': { subjects: ['svc-orders'], claims: ['scope'] } } };
    const server = createJwtServer({ keys, policy, logger: silentLogger });
    const port = await server.listen('127.0.0.1:0', { ...issuerTls(certs), ca: certs.caCert, requireClientCertificate: true });
    const jwt = createJwtClient(`127.0.0.1:${port}`, {
      credentials: credentials.createSsl(certs.caCert, caller.key, caller.cert),
      channelOptions: AS_LOCALHOST,
    });
    try {
      const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))]);
      const call = (claims: Record<string, unknown>) =>
        greeterClient(
          greeter.target,
          credentials.combineChannelCredentials(
            clientTls(certs),
            jwtCallCredentials(jwt, { algorithm: 'ES256', subject: 'svc-orders', claims, logger: silentLogger }),
          ),
        ).hello();
      expect((await call({ scope: 'greet' })).message).toBe('hello svc-orders');
      const refused = await failure(call({ scope: 'greet', role: 'admin' }));
      expect(refused.code).toBe(status.PERMISSION_DENIED);
      expect(refused.details).toContain('policy rule "claims"');
      expect(greeter.handled.count).toBe(1);
    } finally {
      jwt.close();
      await server.close({ graceMs: 0 });
    }
  });
});
