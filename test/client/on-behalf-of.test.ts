/**
 * onBehalfOf over TLS on grpc-js: a service calls the next one with the token its caller
 * came with, exchanged at the issuer (ExchangeToken) for one scoped to the callee, kept until
 * near its expiry, one exchange per caller token however many calls; a refusal fails the call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { type JwtClient, createVerifier, jwtAuthInterceptor, onBehalfOf, silentLogger } from '../../src/lib/index.js';
import { certs, clientTls, failure, greeterClient, issuerClient, issuerTls, keys, startGreeter, useTlsFixture } from './harness.js';
import { startIssuer as startTrackedIssuer } from '../../bench/kit/jwt-servers.js';
import { makeClientCert } from '../../bench/kit/caller-certs.js';

const ORDERS_ID = 'spiffe://example.org/ns/shop/sa/orders';

useTlsFixture();
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-obo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An issuer that exchanges its own tokens addressed to `orders`, a greeter that takes tokens for `greeter`, and a counted client. */
async function scene() {
  const trustFile = join(dir, 'trust.json');
  writeFileSync(trustFile, JSON.stringify({ self: { audiences: ['orders'] } }));
  // Mutual TLS: the issuer names the service calling it (its certificate) as the actor.
  const issuer = await startTrackedIssuer(
    { keys, trustFile, logger: silentLogger },
    { ...issuerTls(certs), ca: certs.caCert, requireClientCertificate: true },
  );
  const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys, { audience: 'greeter' }))]);
  const orders = makeClientCert(certs, 'orders', `URI:${ORDERS_ID}`);
  const client = issuerClient(certs, issuer.target, { credentials: credentials.createSsl(certs.caCert, orders.key, orders.cert) });
  const calls = { exchangeToken: 0 };
  const counting: JwtClient = {
    ...client,
    exchangeToken(request, options) {
      calls.exchangeToken++;
      return client.exchangeToken(request, options);
    },
  };
  const callerToken = async (subject: string, audience = 'orders') =>
    (await client.generateJwt({ algorithm: 'ES256', subject, audience, ttl_seconds: 600 })).jwt;
  return { greeter, counting, calls, callerToken };
}

describe('onBehalfOf', () => {
  it('calls the next service as the caller, with a token for that service, one exchange per caller token', async () => {
    const s = await scene();
    const asCaller = onBehalfOf(s.counting, { audience: 'greeter' });
    const [ada, bob] = [await s.callerToken('ada'), await s.callerToken('bob')];
    const as = (token: string) => greeterClient(s.greeter.target, credentials.combineChannelCredentials(clientTls(certs), asCaller(token)));
    const adaCalls = as(ada);
    const replies = await Promise.all(Array.from({ length: 20 }, () => adaCalls.hello()));
    expect(new Set(replies.map((reply) => reply.message))).toEqual(new Set(['hello ada']));
    expect(s.calls.exchangeToken).toBe(1);
    expect((await as(bob).hello()).message).toBe('hello bob');
    expect(s.calls.exchangeToken).toBe(2);
    // The callee never saw the callers' own tokens, only the exchanged ones.
    expect([...s.greeter.tokens].some((value) => value.includes(ada) || value.includes(bob))).toBe(false);
    expect(JSON.parse((await adaCalls.hello()).claims_json)).toMatchObject({ sub: 'ada', aud: 'greeter', act: { sub: ORDERS_ID } });
  });

  it("fails the call UNAUTHENTICATED when the issuer refuses the caller's token, and refuses bad options when made", async () => {
    const s = await scene();
    const asCaller = onBehalfOf(s.counting, { audience: 'greeter' });
    const foreign = await s.callerToken('eve', 'payroll');
    const err = await failure(
      greeterClient(s.greeter.target, credentials.combineChannelCredentials(clientTls(certs), asCaller(foreign))).hello(),
    );
    expect(err.code).toBe(status.UNAUTHENTICATED);
    expect(err.details).toMatch(/cannot exchange the caller's token at issuer .*subject_token: AUDIENCE_MISMATCH/);
    expect(() => onBehalfOf(s.counting, {})).toThrow(/option audience: or resource is required/);
    expect(() => onBehalfOf(s.counting, { audience: 'greeter', scpoe: 'x' } as never)).toThrow(/did you mean scope/);
  });
});
