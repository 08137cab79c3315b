/**
 * Token exchange in JwtService's core, without a transport: the trust file and its schema,
 * the policy's exchange rules, and what an exchange of the server's own tokens decides
 * (open mode and under a policy): narrowing, lifetime, `act` from the caller's certificate,
 * refusals with their OAuth errors, and the audit line and count of every decision. The
 * token endpoint and external issuers, over the wire: token-exchange.integration.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JWT_POLICY_SCHEMA,
  JWT_TRUST_SCHEMA,
  type JwtPolicy,
  type TrustFile,
  checkPolicy,
  checkTrust,
  createJwtServer,
  generateKeys,
  loadTrust,
  silentLogger,
} from '../../src/lib/index.js';
import { JwtServiceCore } from '../../src/jwt-service/core.js';
import { type CoreObserver, type ExchangeEvent, composeObservers } from '../../src/jwt-service/observer.js';
import { auditObserver, metricsObserver } from '../../src/jwt-service/observers.js';
import { Registry } from 'prom-client';
import { ServiceMetrics } from '../../src/metrics/jwt-service-metrics.js';
import { resolveServiceOptions } from '../../src/jwt-service/options.js';
import type { ExchangeTokenRequest } from '../../src/jwt-service/messages.js';
import { TrustedIssuers } from '../../src/exchange/remote/issuers.js';
import { ExchangeRefused } from '../../src/exchange/refusal.js';
import { decodeJwt } from '../../bench/kit/grpc-clients.js';
import { nowSeconds, recordingLogger, sharedKeys } from '../../bench/kit/jwt-servers.js';

const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ISSUER = 'https://auth.example';
const ORDERS = { id: 'spiffe://example.org/ns/shop/sa/orders', thumbprint: 'x', certificate: Buffer.alloc(0) };
/** The caller that gets the subject tokens from GenerateJwt, under a policy too. */
const MINTER = { id: 'dns:minter.example', thumbprint: 'y', certificate: Buffer.alloc(0) };
const MINTER_POLICY = { [MINTER.id]: { subjects: ['*'], claims: ['scope', 'tenant', 'act'] } };

/** A core that signs with the shared keys and exchanges its own tokens addressed to `orders`. */
async function exchangingCore(
  options: { policy?: JwtPolicy; trust?: TrustFile; observer?: CoreObserver; logger?: ReturnType<typeof recordingLogger> } = {},
) {
  const trust = options.trust ?? { self: { audiences: ['orders'], claims: ['tenant'], maxTtlSeconds: 900 } };
  const logger = options.logger ?? silentLogger;
  const resolved = resolveServiceOptions({ issuer: ISSUER, logger, ...(options.policy !== undefined && { policy: options.policy }) });
  return new JwtServiceCore({
    options: resolved,
    keys: await sharedKeys(),
    // The audit lines as a server writes them, and the test's own hooks.
    observer: composeObservers([auditObserver(logger, resolved.maxSubjectLength), options.observer]),
    exchange: { trust: (own) => new TrustedIssuers(trust, own, { clockToleranceSeconds: 5, logger }), algorithm: 'ES256' },
  });
}

/** A token of the core's own, as GenerateJwt signs it in open mode. */
async function ownToken(core: JwtServiceCore, claims: Record<string, unknown>, ttl = 3600): Promise<string> {
  const { sub = 'alice', aud = 'orders', ...extra } = claims;
  const answer = await core.generate(
    { algorithm: 'ES256', subject: sub as string, audience: aud as string, ttl_seconds: ttl, claims_json: JSON.stringify(extra) },
    { caller: MINTER },
  );
  return answer.jwt;
}

function request(fields: Partial<ExchangeTokenRequest>): ExchangeTokenRequest {
  return {
    subject_token: '',
    subject_token_type: JWT_TYPE,
    actor_token: '',
    actor_token_type: '',
    audience: '',
    resource: '',
    scope: '',
    requested_token_type: '',
    ...fields,
  };
}

/** The OAuth error and rule of a refused exchange. */
async function refusal(promise: Promise<unknown>): Promise<[string, string, string]> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ExchangeRefused) return [err.code, err.oauthError, err.rule];
    throw err;
  }
  throw new Error('expected the exchange to be refused');
}

describe('the trust file', () => {
  it('is read field by field; an unknown field is refused with the nearest one, naming the JSON path', () => {
    const trust = checkTrust({
      $schema: './jwt-trust.schema.json',
      self: { audiences: ['orders'] },
      issuers: { 'https://k8s.example': { audiences: ['jwt-grpc'], subject: 'k8s:{kubernetes.io/namespace}', maxTtlSeconds: 600 } },
      algorithm: 'ES256',
    });
    expect(trust.issuers?.['https://k8s.example']?.subject).toBe('k8s:{kubernetes.io/namespace}');
    const problem = (value: unknown) => {
      try {
        checkTrust(value, 'trust file t.json');
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(problem({ self: { audience: ['x'] } })).toBe(
      'trust file t.json: $.self.audience: is not a field (expected one of audiences, subject, claims, maxTtlSeconds); did you mean $.self.audiences?',
    );
    expect(problem({ issuers: { 'https://a.example': { jwksUrl: 'https://a.example/k' } } })).toMatch(
      /\$\.issuers\["https:\/\/a\.example"\]\.audiences: is required/,
    );
    expect(problem({ self: { audiences: ['x'], subject: 'fixed' } })).toMatch(/\$\.self\.subject: "fixed": names no claim/);
    expect(problem({ self: { audiences: ['x'], subject: '{a//b}' } })).toMatch(/names no claim/);
    expect(problem({ self: { audiences: ['x'], claims: ['act'] } })).toMatch(/\$\.self\.claims\[0\]: "act" is set by the exchange itself/);
    expect(problem({ issuers: { 'not a url': { audiences: ['x'] } } })).toMatch(/must be an http\(s\) URL/);
    expect(problem({ issuers: { i: { audiences: ['x'], jwksUrl: 'https://a/k', jwksFile: 'k.json' } } })).toMatch(/not both/);
    expect(problem({ self: { audiences: ['x'] }, algorithm: 'none' })).toMatch(/\$\.algorithm: is not an algorithm/);
    expect(problem({})).toMatch(/\$: names no issuer/);
  });

  it('has a JSON Schema with exactly the fields the checker reads', () => {
    const fieldsOf = (value: unknown): string[] => {
      try {
        checkTrust(value);
      } catch (err) {
        return /expected one of ([^)]*)\)/.exec((err as Error).message)?.[1]?.split(', ') ?? [];
      }
      return [];
    };
    expect(fieldsOf({ typo: 1 }).sort()).toEqual(Object.keys(JWT_TRUST_SCHEMA.properties).sort());
    expect(fieldsOf({ self: { typo: 1 } }).sort()).toEqual(Object.keys(JWT_TRUST_SCHEMA.$defs.self.properties).sort());
    expect(fieldsOf({ issuers: { 'https://a.example': { typo: 1 } } }).sort()).toEqual(
      Object.keys(JWT_TRUST_SCHEMA.$defs.issuer.properties).sort(),
    );
  });

  it('is loaded from a file, whose name every error carries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-trust-'));
    try {
      const file = join(dir, 'trust.json');
      writeFileSync(file, '{"self": {"audiences": ["orders"]}');
      await expect(loadTrust(file)).rejects.toMatchObject({
        code: 'ERR_INVALID_OPTION',
        message: expect.stringContaining(`trust file ${file}: $: not valid JSON`),
      });
      writeFileSync(file, '{"self": {"audiences": ["orders"]}}');
      await expect(loadTrust(file)).resolves.toEqual({ self: { audiences: ['orders'] } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('createJwtServer with a trust file', () => {
  it('fails listen naming the file and the JSON path of a broken one, or an algorithm its keys do not sign with', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-trust-'));
    try {
      const file = join(dir, 'trust.json');
      const es256 = generateKeys({ algorithms: ['ES256'] });
      const listen = async (trust: unknown) => {
        writeFileSync(file, JSON.stringify(trust));
        const server = createJwtServer({
          keys: await es256,
          trustFile: file,
          logger: silentLogger,
          health: false,
          reflection: false,
        });
        return server.listen('127.0.0.1:0').finally(() => server.close());
      };
      await expect(listen({ self: { audiences: [] } })).rejects.toMatchObject({
        code: 'ERR_INVALID_OPTION',
        field: 'trustFile',
        message: expect.stringContaining(`trust file ${file}: $.self.audiences: must hold at least 1 entry`),
      });
      await expect(listen({ self: { audiences: ['orders'] }, algorithm: 'HS256' })).rejects.toThrow(
        /\$\.algorithm: HS256 is not an algorithm the keys sign with/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the policy's exchange rules", () => {
  it('are checked as the rest of the policy, and its schema names the same fields', () => {
    expect(() => checkPolicy({ callers: {}, exchange: [{ subjects: ['a'], audience: ['b'] }] })).toThrow(
      /\$\.exchange\[0\]\.audience: is not a field .*did you mean \$\.exchange\[0\]\.audiences\?/,
    );
    expect(() => checkPolicy({ callers: {}, exchange: [{ subjects: ['a'] }] })).toThrow(/\$\.exchange\[0\]\.audiences: is required/);
    let fields: string[] = [];
    try {
      checkPolicy({ callers: {}, exchange: [{ typo: 1 }] });
    } catch (err) {
      fields = /expected one of ([^)]*)\)/.exec((err as Error).message)?.[1]?.split(', ') ?? [];
    }
    expect(fields.sort()).toEqual(Object.keys(JWT_POLICY_SCHEMA.$defs.exchangeRule.properties).sort());
  });
});

describe('an exchange of our own tokens', () => {
  it('without a trust file is refused ERR_NO_TOKEN_EXCHANGE', async () => {
    const core = new JwtServiceCore({ options: resolveServiceOptions({ logger: silentLogger }), keys: await sharedKeys() });
    await expect(core.exchange(request({ subject_token: 'a.b.c', audience: 'billing' }))).rejects.toMatchObject({
      code: 'ERR_NO_TOKEN_EXCHANGE',
    });
  });

  it('in open mode: narrows to the scope held, never longer than the subject token, the certificate as actor, act nested', async () => {
    const core = await exchangingCore();
    const subject = await ownToken(core, { scope: 'read write', tenant: 't-1', act: { sub: 'gateway' } }, 120);
    const answer = await core.exchange(request({ subject_token: subject, audience: 'billing', scope: 'read' }), { caller: ORDERS });
    expect(answer).toMatchObject({ token_type: 'Bearer', scope: '', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    expect(answer.expires_in).toBeLessThanOrEqual(120);
    const { header, payload } = decodeJwt(answer.access_token);
    expect(header['alg']).toBe('ES256');
    expect(payload).toMatchObject({
      sub: 'alice',
      iss: ISSUER,
      aud: 'billing',
      scope: 'read',
      tenant: 't-1',
      client_id: ORDERS.id,
      act: { sub: ORDERS.id, act: { sub: 'gateway' } },
    });
    expect(await refusal(core.exchange(request({ subject_token: subject, audience: 'billing', scope: 'admin' })))).toEqual([
      'ERR_PERMISSION_DENIED',
      'invalid_scope',
      'scopes',
    ]);
    // Without a scope asked: the subject token's, said in the answer (it is not the one asked).
    expect((await core.exchange(request({ subject_token: subject, audience: 'billing' }))).scope).toBe('read write');
  });

  it('refuses a malformed request, a token for another audience, a revoked one, each with its OAuth error', async () => {
    const core = await exchangingCore();
    const subject = await ownToken(core, {});
    expect(await refusal(core.exchange(request({ subject_token: subject })))).toEqual([
      'ERR_INVALID_REQUEST',
      'invalid_request',
      'request.audience',
    ]);
    expect(await refusal(core.exchange(request({ subject_token: subject, audience: 'b', subject_token_type: 'urn:x' })))).toEqual([
      'ERR_INVALID_REQUEST',
      'invalid_request',
      'request.subject_token_type',
    ]);
    expect(await refusal(core.exchange(request({ subject_token: subject, resource: 'not a uri' })))).toEqual([
      'ERR_INVALID_REQUEST',
      'invalid_request',
      'request.resource',
    ]);
    const other = await ownToken(core, { aud: 'payroll' });
    expect(await refusal(core.exchange(request({ subject_token: other, audience: 'billing' })))).toEqual([
      'ERR_UNAUTHENTICATED',
      'invalid_request',
      'subject_token',
    ]);
    await core.revocations.revoke({ jti: decodeJwt(subject).payload['jti'] as string, expiresAt: nowSeconds() + 3600 });
    await expect(core.exchange(request({ subject_token: subject, audience: 'billing' }))).rejects.toThrow(/REVOKED/);
  });

  it("under a policy: an exchange over its rule's rate is refused ERR_RATE_LIMITED, while another rule's subjects go on", async () => {
    const policy: JwtPolicy = {
      callers: MINTER_POLICY,
      exchange: [
        { subjects: ['noisy'], audiences: ['billing'], rate: { perSecond: 0.001, burst: 2 } },
        { subjects: ['quiet'], audiences: ['billing'] },
      ],
    };
    const core = await exchangingCore({ policy });
    const noisy = await ownToken(core, { sub: 'noisy' });
    const quiet = await ownToken(core, { sub: 'quiet' });
    const exchange = (subject_token: string) => core.exchange(request({ subject_token, audience: 'billing' }));
    await exchange(noisy);
    await exchange(noisy);
    await expect(exchange(noisy)).rejects.toMatchObject({
      code: 'ERR_RATE_LIMITED',
      rule: 'rate',
      message: 'policy rule "rate": exchange rule 0 is over its rate (0.001 tokens/s, burst 2); retry later',
    });
    for (let i = 0; i < 5; i++) expect((await exchange(quiet)).access_token.split('.')).toHaveLength(3);
    // A reload keeps what is left of the bucket: no fresh burst.
    core.setPolicy(policy);
    await expect(exchange(noisy)).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
  });

  it('under a policy: only by its exchange rules, which may grant more by name; every decision audited and counted', async () => {
    const events: ExchangeEvent[] = [];
    const logger = recordingLogger();
    const registry = new Registry();
    const counted = metricsObserver(new ServiceMetrics(registry));
    const policy: JwtPolicy = {
      callers: MINTER_POLICY,
      exchange: [
        {
          subjects: ['alice'],
          actors: [ORDERS.id],
          audiences: ['billing'],
          grantScopes: ['billing:charge'],
          maxTtlSeconds: 3000,
          outliveSubject: true,
        },
      ],
    };
    const core = await exchangingCore({
      policy,
      logger,
      observer: composeObservers([counted, { onExchange: (event) => events.push(event) }]),
    });
    const subject = await ownToken(core, { scope: 'read' }, 60);
    const answer = await core.exchange(request({ subject_token: subject, audience: 'billing', scope: 'read billing:charge' }), {
      caller: ORDERS,
    });
    // maxTtlSeconds of the trust (900) still bounds what outliveSubject lets pass the subject's 60 s.
    expect(answer.expires_in).toBe(900);
    expect(decodeJwt(answer.access_token).payload['scope']).toBe('read billing:charge');
    // No actor: no rule lets alice exchange her own token.
    expect(await refusal(core.exchange(request({ subject_token: subject, audience: 'billing' })))).toEqual([
      'ERR_PERMISSION_DENIED',
      'invalid_request',
      'policy',
    ]);
    expect(await refusal(core.exchange(request({ subject_token: subject, audience: 'ledger' }), { caller: ORDERS }))).toEqual([
      'ERR_PERMISSION_DENIED',
      'invalid_target',
      'audiences',
    ]);
    expect(events.map((event) => event.outcome)).toEqual(['issued', 'refused', 'refused']);
    const audit = logger.lines.filter((line) => (line.fields as { audit?: string } | undefined)?.audit === 'exchange');
    expect(audit.map((line) => [line.level, line.message, (line.fields as { rule: string }).rule])).toEqual([
      ['info', 'exchange: token issued', 'none'],
      ['warn', 'exchange: token refused', 'policy'],
      ['warn', 'exchange: token refused', 'audiences'],
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain(subject);
    const samples = (await registry.metrics()).split('\n').filter((line) => line.startsWith('jwt_grpc_token_exchanges_total{'));
    expect(samples.sort()).toEqual([
      'jwt_grpc_token_exchanges_total{decision="allow",rule="none"} 1',
      'jwt_grpc_token_exchanges_total{decision="deny",rule="audiences"} 1',
      'jwt_grpc_token_exchanges_total{decision="deny",rule="policy"} 1',
    ]);
    // A policy without exchange rules refuses every exchange.
    const closed = await exchangingCore({ policy: { callers: MINTER_POLICY } });
    expect(
      await refusal(closed.exchange(request({ subject_token: await ownToken(closed, {}), audience: 'billing' }), { caller: ORDERS })),
    ).toEqual(['ERR_PERMISSION_DENIED', 'invalid_request', 'policy']);
  });
});
