/** jwtCallCredentials over TLS: when it asks the issuer for a token, and how a call fails when it cannot get one. */
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GrpcStatusError, JwtGrpcError, type KeySet, GrpcStatus, createJwtServer, createVerifier, generateKeys, jwtAuthInterceptor, jwtCallCredentials, silentLogger } from '../../src/lib.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { cleanup, clientTls, counted, failure, greeterClient, issuerClient, issuerTls, startGreeter, startIssuer } from './harness.js';
import { sleep, waitUntil } from '../../bench/kit/wait.js';

let certs: TestCerts;
let keys: KeySet;

beforeAll(async () => {
  if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
  certs = makeTestCerts();
  keys = await generateKeys({ algorithms: ['ES256'] });
});
afterEach(cleanup);
afterAll(() => certs?.remove());


async function scene(tokenOptions: { ttlSeconds?: number; refreshBeforeSeconds?: number; algorithm?: string }) {
  const issuer = await startIssuer(certs, { keys });
  // Keys in hand: a createVerifier verifier serves the interceptor as well as a remote one.
  const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys))]);
  const tokens = counted(issuerClient(certs, issuer.target));
  const auth = jwtCallCredentials(tokens.client, { algorithm: 'ES256', subject: 'svc', logger: silentLogger, ...tokenOptions });
  const caller = greeterClient(greeter.target, credentials.combineChannelCredentials(clientTls(certs), auth));
  return { issuer, greeter, tokens, caller };
}

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
    const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys))]);
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
    ];
    for (const [field, make] of cases) {
      expect(make).toThrow(JwtGrpcError);
      expect(() => make()).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field }));
    }
  });
});
