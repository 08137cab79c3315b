/**
 * The issuance policy over real mutual TLS, on both transports: what a caller may get,
 * each rule allowed and denied (PERMISSION_DENIED naming the rule, nothing signed), an
 * unknown caller, a caller without a certificate, and the option checked at start.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JWT_POLICY_SCHEMA, type JwtPolicy, type KeySet, checkPolicy, createJwtServer } from '../../src/lib/index.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { Registry } from 'prom-client';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { ClientPool, callError, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { waitUntil } from '../../bench/kit/wait.js';
import { TRANSPORTS, closeAllServers, recordingLogger, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';

const ORDERS = 'spiffe://example.org/ns/shop/sa/orders';
const POLICY: JwtPolicy = {
  callers: {
    [ORDERS]: { subjects: ['svc-orders'], audiences: ['greeter', 'billing'], algorithms: ['ES256'], maxTtlSeconds: 600, claims: ['role'] },
    'dns:reports.example.org': { subjects: ['report-*'], audiences: ['*'], bind: true },
  },
};

describe.skipIf(!hasOpenssl())('issuance policy', () => {
  let certs: TestCerts;
  let keys: KeySet;
  let orders: ClientCert;
  let reports: ClientCert;
  let stranger: ClientCert;
  const clients = new ClientPool();

  beforeAll(async () => {
    certs = makeTestCerts();
    keys = await sharedKeys();
    orders = makeClientCert(certs, 'orders', `URI:${ORDERS}`);
    reports = makeClientCert(certs, 'reports', 'DNS:reports.example.org');
    stranger = makeClientCert(certs, 'stranger', 'URI:spiffe://example.org/ns/shop/sa/stranger');
  });

  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
    certs?.remove();
  });

  describe.each(TRANSPORTS)('on %s', (transport) => {
    let port: number;
    let openPort: number;
    const as = (cert: ClientCert | undefined, at = port) =>
      clients.jwt(at, {
        host: 'localhost',
        credentials: cert === undefined ? credentials.createSsl(certs.caCert) : credentials.createSsl(certs.caCert, cert.key, cert.cert),
      });

    beforeAll(async () => {
      const tls = { key: certs.serverKey, cert: certs.serverCert, ca: certs.caCert };
      const server = trackServer(createJwtServer({ keys, transport, policy: POLICY, defaultTtlSeconds: 3600 }));
      port = await server.listen('127.0.0.1:0', { ...tls, requireClientCertificate: true });
      // TLS without client certificates: the policy finds no caller.
      const open = trackServer(createJwtServer({ keys, transport, policy: POLICY }));
      openPort = await open.listen('127.0.0.1:0', tls);
    });

    it('signs what the caller entry allows; no subject gets its first subject without "*"; no ttl the lower maximum', async () => {
      const now = Math.floor(Date.now() / 1000);
      const named = await as(orders).generateJwt({
        algorithm: 'ES256',
        subject: 'svc-orders',
        audience: 'billing',
        ttl_seconds: 300,
        claims_json: '{"role":"reader"}',
      });
      expect(decodeJwt(named.jwt).payload).toMatchObject({ sub: 'svc-orders', aud: 'billing', role: 'reader' });
      const unnamed = await as(orders).generateJwt({ algorithm: 'ES256', audience: 'greeter' });
      expect(unnamed.sub).toBe('svc-orders');
      expect(unnamed.expires_at - now).toBeGreaterThanOrEqual(599);
      expect(unnamed.expires_at - now).toBeLessThanOrEqual(601);
      const prefixed = await as(reports).generateJwt({ algorithm: 'HS256', subject: 'report-weekly' });
      expect(prefixed.sub).toBe('report-weekly');
    });

    it.each([
      ['subjects', { algorithm: 'ES256', subject: 'svc-billing', audience: 'greeter' }],
      ['audiences', { algorithm: 'ES256', subject: 'svc-orders', audience: 'payroll' }],
      ['audiences', { algorithm: 'ES256', subject: 'svc-orders' }],
      ['algorithms', { algorithm: 'HS256', subject: 'svc-orders', audience: 'greeter' }],
      ['maxTtlSeconds', { algorithm: 'ES256', subject: 'svc-orders', audience: 'greeter', ttl_seconds: 601 }],
      ['claims', { algorithm: 'ES256', subject: 'svc-orders', audience: 'greeter', claims_json: '{"admin":true}' }],
    ])('refuses a request outside the entry: rule %s', async (rule, request) => {
      const failure = await callError(as(orders).generateJwt(request));
      expect(failure).toMatchObject({ code: status.PERMISSION_DENIED });
      expect(failure.details).toContain(`policy rule "${rule}"`);
    });

    it('refuses a prefix pattern to a subject without the prefix, and a caller with no subject without "*" that names none', async () => {
      expect(await callError(as(reports).generateJwt({ algorithm: 'HS256', subject: 'svc-orders' }))).toMatchObject({
        code: status.PERMISSION_DENIED,
      });
      const none = await callError(as(reports).generateJwt({ algorithm: 'HS256' }));
      expect(none).toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('policy rule "subjects"') });
    });

    it('refuses an unknown caller, and a call without a client certificate; VerifyJwt and GetJwks stay open to them', async () => {
      const unknown = await callError(as(stranger).generateJwt({ algorithm: 'ES256', subject: 'svc-orders', audience: 'greeter' }));
      expect(unknown).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('spiffe://example.org/ns/shop/sa/stranger is not in the policy'),
      });
      const anonymous = await callError(
        as(undefined, openPort).generateJwt({ algorithm: 'ES256', subject: 'svc-orders', audience: 'greeter' }),
      );
      expect(anonymous).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('no verified client certificate'),
      });
      const token = (await as(orders).generateJwt({ algorithm: 'ES256', audience: 'greeter' })).jwt;
      expect(await as(stranger).verifyJwt({ jwt: token })).toMatchObject({ valid: true, sub: 'svc-orders' });
      expect((await as(undefined, openPort).getJwks()).jwks_json).toContain('"keys"');
    });
  });

  describe.each(TRANSPORTS)('tokens say who asked, on %s', (transport) => {
    const tls = () => ({ key: certs.serverKey, cert: certs.serverCert, ca: certs.caCert });
    const as = (port: number, cert?: ClientCert) =>
      clients.jwt(port, {
        host: 'localhost',
        credentials: cert === undefined ? credentials.createSsl(certs.caCert) : credentials.createSsl(certs.caCert, cert.key, cert.cert),
      });
    const thumbprint = (cert: ClientCert) => createHash('sha256').update(cert.der).digest('base64url');

    it('client_id names the caller; a caller with bind gets cnf x5t#S256 of its certificate, the others none', async () => {
      const port = await trackServer(createJwtServer({ keys, transport, policy: POLICY })).listen('127.0.0.1:0', {
        ...tls(),
        requireClientCertificate: true,
      });
      const unbound = decodeJwt((await as(port, orders).generateJwt({ algorithm: 'ES256', audience: 'greeter' })).jwt).payload;
      expect(unbound).toMatchObject({ client_id: ORDERS });
      expect(unbound).not.toHaveProperty('cnf');
      const bound = decodeJwt((await as(port, reports).generateJwt({ algorithm: 'ES256', subject: 'report-1' })).jwt).payload;
      expect(bound).toMatchObject({ client_id: 'dns:reports.example.org', cnf: { 'x5t#S256': thumbprint(reports) } });
      const forged = await callError(
        as(port, orders).generateJwt({ algorithm: 'ES256', audience: 'greeter', claims_json: '{"client_id":"x"}' }),
      );
      expect(forged).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('client_id') });
    });

    it('bindTokens without a policy: every token bound to its caller; a call without a certificate refused', async () => {
      const server = trackServer(createJwtServer({ keys, transport, bindTokens: true }));
      const port = await server.listen('127.0.0.1:0', { ...tls(), requireClientCertificate: true });
      const payload = decodeJwt((await as(port, stranger).generateJwt({ algorithm: 'HS256', subject: 'anyone' })).jwt).payload;
      expect(payload).toMatchObject({ client_id: 'spiffe://example.org/ns/shop/sa/stranger', cnf: { 'x5t#S256': thumbprint(stranger) } });
      const anonymousPort = await trackServer(createJwtServer({ keys, transport, bindTokens: true })).listen('127.0.0.1:0', tls());
      const refused = await callError(as(anonymousPort).generateJwt({ algorithm: 'HS256', subject: 'anyone' }));
      expect(refused).toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('policy rule "bind"') });
    });
  });

  it.each(TRANSPORTS)('on %s, writes one audit line per decision, never the token, and counts decisions by rule', async (transport) => {
    const logger = recordingLogger();
    const registry = new Registry();
    const server = trackServer(createJwtServer({ keys, transport, policy: POLICY, logger, metricsRegistry: registry }));
    const port = await server.listen('127.0.0.1:0', {
      key: certs.serverKey,
      cert: certs.serverCert,
      ca: certs.caCert,
      requireClientCertificate: true,
    });
    const client = clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, orders.key, orders.cert) });
    const issued = await client.generateJwt({ algorithm: 'ES256', audience: 'greeter', ttl_seconds: 300 });
    await callError(client.generateJwt({ algorithm: 'ES256', audience: 'payroll' }));
    await callError(client.generateJwt({ algorithm: 'HS256', audience: 'greeter' }));
    const audit = logger.lines.filter((line) => (line.fields as Record<string, unknown> | undefined)?.['audit'] !== undefined);
    expect(audit).toEqual([
      {
        level: 'info',
        message: 'policy: token issued',
        fields: {
          audit: 'issue',
          decision: 'allow',
          rule: 'none',
          caller: ORDERS,
          sub: 'svc-orders',
          aud: 'greeter',
          alg: 'ES256',
          kid: issued.kid,
          jti: decodeJwt(issued.jwt).payload['jti'],
          ttl: 300,
          bound: false,
        },
      },
      expect.objectContaining({
        level: 'warn',
        message: 'policy: token refused',
        fields: expect.objectContaining({ decision: 'deny', rule: 'audiences', caller: ORDERS, aud: 'payroll' }),
      }),
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ decision: 'deny', rule: 'algorithms', alg: 'HS256' }) }),
    ]);
    expect(decodeJwt(issued.jwt).payload['jti']).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(logger.lines)).not.toContain(issued.jwt.split('.')[2]);
    const text = await registry.metrics();
    expect(text).toMatch(/jwt_grpc_policy_decisions_total\{decision="allow",rule="none"\} 1/);
    expect(text).toMatch(/jwt_grpc_policy_decisions_total\{decision="deny",rule="audiences"\} 1/);
    expect(text).toMatch(/jwt_grpc_policy_decisions_total\{decision="deny",rule="algorithms"\} 1/);
  });

  it.each(TRANSPORTS)(
    'on %s, every refused GenerateJwt, a bad request field too, gets one audit line (the same refusal again within a second: a count) and one count',
    async (transport) => {
      const logger = recordingLogger();
      const registry = new Registry();
      const server = trackServer(createJwtServer({ keys, transport, policy: POLICY, logger, metricsRegistry: registry }));
      const port = await server.listen('127.0.0.1:0', {
        key: certs.serverKey,
        cert: certs.serverCert,
        ca: certs.caCert,
        requireClientCertificate: true,
      });
      const as = (cert: ClientCert) =>
        clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, cert.key, cert.cert) });
      const base = { algorithm: 'ES256', audience: 'greeter' };
      // Each kind of refusal, with the status and the rule it is counted under; reports has no algorithms rule, so the signer refuses its algorithm.
      const refusals = [
        {
          by: orders,
          request: { ...base, claims_json: '{"iss":"forged"}' },
          code: status.INVALID_ARGUMENT,
          rule: 'request.claims_json',
          field: 'claims_json',
        },
        {
          by: orders,
          request: { ...base, claims_json: '{"role":' },
          code: status.INVALID_ARGUMENT,
          rule: 'request.claims_json',
          field: 'claims_json',
        },
        {
          by: orders,
          request: { ...base, ttl_seconds: -5 },
          code: status.INVALID_ARGUMENT,
          rule: 'request.ttl_seconds',
          field: 'ttl_seconds',
        },
        {
          by: reports,
          request: { algorithm: 'XX256', subject: 'report-1' },
          code: status.INVALID_ARGUMENT,
          rule: 'request.algorithm',
          field: 'algorithm',
        },
        {
          by: reports,
          request: { algorithm: 'ES256', subject: `report-${'x'.repeat(2000)}` },
          code: status.INVALID_ARGUMENT,
          rule: 'request.subject',
          field: 'subject',
        },
        {
          by: reports,
          request: { algorithm: 'ES256', subject: 'report-1', audience: 'a'.repeat(2000) },
          code: status.INVALID_ARGUMENT,
          rule: 'request.audience',
          field: 'audience',
        },
        { by: orders, request: { ...base, claims_json: '{"team":"x"}' }, code: status.PERMISSION_DENIED, rule: 'claims', field: 'claims' },
        {
          by: orders,
          request: { ...base, ttl_seconds: 700 },
          code: status.PERMISSION_DENIED,
          rule: 'maxTtlSeconds',
          field: 'maxTtlSeconds',
        },
        { by: orders, request: { ...base, subject: 'svc-billing' }, code: status.PERMISSION_DENIED, rule: 'subjects', field: 'subjects' },
        { by: stranger, request: base, code: status.PERMISSION_DENIED, rule: 'caller', field: 'caller' },
      ];
      const written = new Map<ClientCert, Set<string>>();
      for (const { by, request, code, rule, field } of refusals) {
        const before = logger.lines.length;
        const err = await callError(as(by).generateJwt(request));
        expect(err, rule).toMatchObject({ code, details: expect.stringContaining(field) });
        const added = logger.lines
          .slice(before)
          .filter((line) => (line.fields as Record<string, unknown> | undefined)?.['audit'] !== undefined);
        // The second claims_json refusal of the same caller, right after the first: counted, not written.
        const rules = written.get(by) ?? new Set<string>();
        if (rules.has(rule)) {
          expect(added, rule).toEqual([]);
          continue;
        }
        written.set(by, rules.add(rule));
        expect(added, rule).toEqual([
          {
            level: 'warn',
            message: 'policy: token refused',
            fields: expect.objectContaining({ audit: 'refuse', decision: 'deny', rule, reason: err.details }),
          },
        ]);
        // An oversized subject or audience is quoted clipped, never whole.
        expect(JSON.stringify(added).length, rule).toBeLessThan(2000);
      }
      await as(orders).generateJwt(base);
      const text = await registry.metrics();
      const counts = [...text.matchAll(/^jwt_grpc_policy_decisions_total\{decision="(\w+)",rule="([\w.]+)"\} (\d+)$/gm)].map(
        ([, decision, rule, n]) => [`${decision}/${rule}`, Number(n)] as const,
      );
      expect(Object.fromEntries(counts)).toEqual({
        'allow/none': 1,
        'deny/request.claims_json': 2,
        'deny/request.ttl_seconds': 1,
        'deny/request.algorithm': 1,
        'deny/request.subject': 1,
        'deny/request.audience': 1,
        'deny/claims': 1,
        'deny/maxTtlSeconds': 1,
        'deny/subjects': 1,
        'deny/caller': 1,
      });
      expect(counts.reduce((sum, [, n]) => sum + n, 0)).toBe(refusals.length + 1);
      // Once the second is over, the line left out is told as a count.
      const summary = {
        level: 'warn',
        message: 'policy: audit lines suppressed',
        fields: { audit: 'refuse', caller: ORDERS, decision: 'deny', rule: 'request.claims_json', suppressed: 1, windowMs: 1000 },
      };
      expect(await waitUntil(() => logger.lines.some((line) => isDeepStrictEqual(line, summary)), 3_000, 50)).toBe(true);
    },
  );

  it.each(TRANSPORTS)(
    'on %s, answers a caller over its rate RESOURCE_EXHAUSTED naming the rate, while a caller beside it gets every token; its refusals are summarised in the audit log',
    async (transport) => {
      const rated: JwtPolicy = {
        callers: { ...POLICY.callers, [ORDERS]: { ...POLICY.callers[ORDERS], subjects: ['svc-orders'], rate: { perSecond: 1, burst: 5 } } },
      };
      const logger = recordingLogger();
      const server = trackServer(createJwtServer({ keys, transport, policy: rated, logger }));
      const port = await server.listen('127.0.0.1:0', {
        key: certs.serverKey,
        cert: certs.serverCert,
        ca: certs.caCert,
        requireClientCertificate: true,
      });
      const client = (cert: ClientCert) =>
        clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, cert.key, cert.cert) });
      const [attacker, neighbour] = [client(orders), client(reports)];
      const startedAt = Date.now();
      const [flood, fair] = await Promise.all([
        Promise.all(
          Array.from({ length: 60 }, () =>
            callError(attacker.generateJwt({ algorithm: 'ES256', audience: 'greeter' })).catch(() => 'signed'),
          ),
        ),
        Promise.allSettled(Array.from({ length: 60 }, (_, i) => neighbour.generateJwt({ algorithm: 'ES256', subject: `report-${i}` }))),
      ]);
      const seconds = Math.ceil((Date.now() - startedAt) / 1000);
      const signed = flood.filter((outcome) => outcome === 'signed').length;
      // The burst, plus what one token a second refilled while the flood lasted.
      expect(signed).toBeGreaterThanOrEqual(5);
      expect(signed).toBeLessThanOrEqual(5 + seconds);
      const details = `policy rule "rate": caller ${ORDERS} is over its rate (1 tokens/s, burst 5); retry later`;
      for (const outcome of flood.filter((each) => each !== 'signed'))
        expect(outcome).toEqual({ code: status.RESOURCE_EXHAUSTED, details });
      expect(fair.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      // The refusals of the flood: one whole line a second, then how many were left out; together, every refusal.
      const ofRate = () =>
        logger.lines.filter((line) => (line.fields as Record<string, unknown> | undefined)?.['rule'] === 'rate') as {
          message: string;
          fields: { suppressed?: number };
        }[];
      const told = () => ofRate().reduce((sum, line) => sum + (line.fields.suppressed ?? 1), 0);
      expect(await waitUntil(() => told() === 60 - signed, 3_000, 50)).toBe(true);
      const whole = ofRate().filter((line) => line.message === 'policy: token refused').length;
      expect(whole).toBeLessThanOrEqual(seconds + 1);
    },
  );

  it.each(TRANSPORTS)('on %s, setPolicy puts a new policy in use; a broken one is refused and the one in use stays', async (transport) => {
    const server = trackServer(createJwtServer({ keys, transport, policy: POLICY }));
    const port = await server.listen('127.0.0.1:0', {
      key: certs.serverKey,
      cert: certs.serverCert,
      ca: certs.caCert,
      requireClientCertificate: true,
    });
    const client = clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, stranger.key, stranger.cert) });
    const ask = () => client.generateJwt({ algorithm: 'HS256', subject: 'svc-stranger' });
    expect(await callError(ask())).toMatchObject({ code: status.PERMISSION_DENIED });
    const next: JwtPolicy = { callers: { ...POLICY.callers, 'spiffe://example.org/ns/shop/sa/stranger': { subjects: ['svc-stranger'] } } };
    server.service.setPolicy(next);
    expect((await ask()).sub).toBe('svc-stranger');
    expect(() => server.service.setPolicy({ callers: { 'dns:a': { subjects: [] } } })).toThrow(
      '$.callers["dns:a"].subjects: must hold at least 1 entry',
    );
    expect(server.service.policy).toEqual(next);
    expect((await ask()).sub).toBe('svc-stranger');
  });

  it('refuses a policy that breaks the schema at start, naming the JSON path', () => {
    const bad = (policy: unknown) => () => createJwtServer({ keys, policy: policy as JwtPolicy });
    expect(bad({ callers: { [ORDERS]: { audiences: ['x'] } } })).toThrow(`$.callers["${ORDERS}"].subjects: is required`);
    expect(bad({ callers: { 'dns:a': { subjects: ['a'], audience: ['x'] } } })).toThrow('$.callers["dns:a"].audience: is not a field');
    expect(bad({ callers: { 'dns:a': { subjects: ['a*b'] } } })).toThrow(
      '$.callers["dns:a"].subjects[0]: "a*b": "*" may only end a pattern',
    );
    expect(bad({ callers: { 'dns:a': { subjects: ['a'], maxTtlSeconds: 0 } } })).toThrow('maxTtlSeconds: must be an integer of at least 1');
    expect(bad({})).toThrow('$.callers: is required');
    expect(checkPolicy(POLICY)).toEqual(POLICY);
  });

  it('the shipped JSON Schema names the same fields the server accepts, each documented in docs/policy.md', () => {
    const accepted = (policy: unknown): string[] => {
      try {
        checkPolicy(policy);
      } catch (err) {
        return /expected one of (.*)\)$/.exec((err as Error).message)?.[1]?.split(', ') ?? [];
      }
      return [];
    };
    const callerFields = accepted({ callers: { 'dns:a': { subjects: ['a'], typo: 1 } } });
    expect(callerFields.sort()).toEqual(Object.keys(JWT_POLICY_SCHEMA.$defs.caller.properties).sort());
    expect(accepted({ callers: {}, typo: 1 }).sort()).toEqual(Object.keys(JWT_POLICY_SCHEMA.properties).sort());
    const page = readFileSync(join(PACKAGE_ROOT, 'docs', 'policy.md'), 'utf8');
    for (const field of callerFields) expect(page).toContain(`| \`callers.*.${field}\` |`);
  });
});
