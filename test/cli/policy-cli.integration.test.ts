/**
 * `jwt-grpc serve --policy FILE`: a broken file (a broken --trust-file too), or a policy without mutual TLS, stops the
 * start with exit 2 and one line (file, JSON path, problem; the flag to add); without one the server warns of open mode; with one it
 * answers a caller over mutual TLS by its entry, in a single process and in every worker
 * of a cluster on both transports.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts, mutualTlsArgs } from '../../bench/kit/certs.js';
import { ClientPool, callError, decodeJwt } from '../../bench/kit/grpc-clients.js';

describe.skipIf(!hasOpenssl())('serve --policy', () => {
  let certs: TestCerts;
  let orders: ClientCert;
  const clients = new ClientPool();
  const file = (name: string, content: string): string => {
    const path = join(certs.dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeAll(() => {
    certs = makeTestCerts();
    orders = makeClientCert(certs, 'orders', 'URI:spiffe://example.org/ns/shop/sa/orders');
  });

  afterAll(async () => {
    clients.closeAll();
    await killAll();
    certs?.remove();
  });

  it.each([
    [
      'a file that breaks the schema',
      '{"callers":{"dns:a":{"subjects":["a"],"audience":["x"]}}}',
      '$.callers["dns:a"].audience: is not a field',
    ],
    ['a file that is not JSON', '{"callers":', '$: not valid JSON'],
  ])('exits 2 on %s, with one line naming the file, the JSON path and the problem', async (_, content, problem) => {
    const policy = file('bad-policy.json', content);
    const tls = mutualTlsArgs(certs);
    const result = await runCli(serveArgs('--policy', policy, ...tls));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.split('\n')[0]).toContain(`jwt-grpc: policy file ${policy}: ${problem}`);
    expect(result.stdout).toBe('');
  });

  it('exits 2 on a trust file that breaks its schema, with one line naming the file, the JSON path and the problem', async () => {
    const trust = file('bad-trust.json', '{"self":{"audience":["orders"]}}');
    const result = await runCli(serveArgs('--trust-file', trust));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      `jwt-grpc: trust file ${trust}: $.self.audience: is not a field (expected one of audiences, subject, claims, maxTtlSeconds); did you mean $.self.audiences?`,
    );
    expect(result.stdout).toBe('');
  });

  it('exits 2 on a policy without mutual TLS, naming --tls-client-ca, before reading the file', async () => {
    const result = await runCli(serveArgs('--policy', file('policy-no-mtls.json', '{"callers":{}}')));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(/^jwt-grpc: option --policy: needs mutual TLS, .*--tls-client-ca: /);
    expect(result.stdout).toBe('');
  });

  it('warns of open mode without --policy; with one, signs for the caller by its entry and refuses the rest', async () => {
    const open = await startCli(serveArgs());
    expect(open.stderr).toMatch(/no --policy: OPEN MODE/);
    expect(open.stdout).toContain('policy: none (open');
    await open.stop();

    const policy = file(
      'policy.json',
      JSON.stringify({ callers: { 'spiffe://example.org/ns/shop/sa/orders': { subjects: ['svc-orders'] } } }),
    );
    const tls = mutualTlsArgs(certs);
    const cli = await startCli(serveArgs('--policy', policy, ...tls));
    expect(cli.stderr).not.toMatch(/OPEN MODE/);
    expect(cli.stdout).toContain(`policy: 1 callers from ${policy}`);
    const client = clients.jwt(cli.port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, orders.key, orders.cert) });
    expect((await client.generateJwt({ algorithm: 'HS256' })).sub).toBe('svc-orders');
    expect(await callError(client.generateJwt({ algorithm: 'HS256', subject: 'root' }))).toMatchObject({ code: status.PERMISSION_DENIED });
    await cli.stop();
  });

  it.each(['http2', 'grpc-js'])('a cluster of 2 on %s: every worker enforces the policy', async (transport) => {
    const policy = file(
      'cluster-policy.json',
      JSON.stringify({ callers: { 'spiffe://example.org/ns/shop/sa/orders': { subjects: ['svc-orders'], bind: true } } }),
    );
    const tls = mutualTlsArgs(certs);
    const cli = await startCli(serveArgs('--policy', policy, '--transport', transport, ...tls), { env: { NODEMAXPROCS: '2' } });
    expect(cli.workerPids).toHaveLength(2);
    // Channels of their own (a distinct user agent each), so the calls spread over the workers.
    for (let i = 0; i < 4; i++) {
      const client = clients.jwt(cli.port, {
        host: 'localhost',
        credentials: credentials.createSsl(certs.caCert, orders.key, orders.cert),
        channelOptions: { 'grpc.primary_user_agent': `policy-cluster-${transport}-${i}` },
      });
      const token = await client.generateJwt({ algorithm: 'ES256' });
      expect(decodeJwt(token.jwt).payload).toMatchObject({
        sub: 'svc-orders',
        cnf: { 'x5t#S256': createHash('sha256').update(orders.der).digest('base64url') },
      });
      expect(await callError(client.generateJwt({ algorithm: 'ES256', subject: 'root' }))).toMatchObject({
        code: status.PERMISSION_DENIED,
      });
    }
    await cli.stop();
  });
});
