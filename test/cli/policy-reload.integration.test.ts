/**
 * Reloading `serve --policy FILE` without a restart, over mutual TLS with certificates
 * made here: SIGHUP (and `--watch-keys`, which watches the policy file too) puts the
 * edited file in use in a single process and in every worker of a cluster, on both
 * transports; a broken file is refused with one line naming the file, the JSON path and
 * the problem, and the policy in use stays everywhere.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { waitUntil } from '../../bench/kit/wait.js';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts, mutualTlsArgs } from '../../bench/kit/certs.js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { bannerMetricsPort, scrape, valueOf } from '../ops/helpers.js';
import { jsonLines } from '../ops/reload-helpers.js';

const ORDERS = 'spiffe://example.org/ns/shop/sa/orders';
/** The first policy: orders may get svc-orders tokens. */
const ALLOW = JSON.stringify({ callers: { [ORDERS]: { subjects: ['svc-orders'] } } });
/** The edit: orders may get svc-billing tokens only. */
const DENY = JSON.stringify({ callers: { [ORDERS]: { subjects: ['svc-billing'] } } });
/** Valid JSON that breaks the schema: a misspelt field. */
const BROKEN = JSON.stringify({ callers: { [ORDERS]: { subject: ['svc-orders'] } } });

describe.skipIf(!hasOpenssl() || process.platform !== 'linux')('policy reload', () => {
  let certs: TestCerts;
  let orders: ClientCert;
  let tls: string[];
  const clients = new ClientPool();
  let channels = 0;

  beforeAll(() => {
    certs = makeTestCerts();
    orders = makeClientCert(certs, 'orders', `URI:${ORDERS}`);
    tls = [...mutualTlsArgs(certs), '--log-format', 'json'];
  });

  afterAll(async () => {
    clients.closeAll();
    await killAll();
    certs?.remove();
  });

  const policyFile = (name: string, content: string): string => {
    const path = join(certs.dir, name);
    writeFileSync(path, content);
    return path;
  };

  /** What GenerateJwt for `subject` answers on `connections` connections of their own (fresh ones land on every worker of a cluster). */
  async function answers(server: CliServer, subject: string, connections: number): Promise<number[]> {
    const codes: number[] = [];
    for (let i = 0; i < connections; i++) {
      channels += 1;
      const client = clients.jwt(server.port, {
        host: 'localhost',
        credentials: credentials.createSsl(certs.caCert, orders.key, orders.cert),
        channelOptions: { 'grpc.primary_user_agent': `policy-reload-${channels}` },
      });
      const call = client.generateJwt({ algorithm: 'HS256', subject });
      codes.push(
        await call.then(
          () => status.OK,
          async () => (await callError(call)).code,
        ),
      );
    }
    return codes;
  }

  /** Waits for `message` from every serving process (each worker's own line in a cluster) since `from`. */
  async function waitForLines(server: CliServer, from: number, message: (pid: number) => string): Promise<Record<string, unknown>[]> {
    const found = (): Record<string, unknown>[] =>
      server.workerPids.flatMap((pid) =>
        jsonLines(server, from)
          .filter((line) => line['message'] === message(pid))
          .slice(0, 1),
      );
    const done = await waitUntil(() => found().length === server.workerPids.length, 20_000);
    expect(done, `${message(0)} from every process; log since:\n${server.stderr.slice(from)}`).toBe(true);
    return found();
  }

  /** The policy reload counters of the server's /metrics (a cluster's primary counts them). */
  async function reloadCounts(server: CliServer): Promise<{ reloads: number; failures: number }> {
    const samples = await scrape(bannerMetricsPort(server.stdout));
    return {
      reloads: valueOf(samples, 'jwt_grpc_policy_reloads_total'),
      failures: valueOf(samples, 'jwt_grpc_policy_reload_failures_total'),
    };
  }

  async function waitForFailure(server: CliServer, from: number): Promise<string> {
    const failure = (): Record<string, unknown> | undefined =>
      jsonLines(server, from).find((line) => line['level'] === 'error' && String(line['message']).startsWith('policy reload failed'));
    expect(
      await waitUntil(() => failure() !== undefined, 20_000),
      `a policy reload failure line; log since:\n${server.stderr.slice(from)}`,
    ).toBe(true);
    return String(failure()?.['message']);
  }

  const single = (): string => 'policy reloaded';
  const worker = (pid: number): string => `worker ${pid} reloaded the policy`;

  it.each(['http2', 'grpc-js'])(
    'single process on %s: SIGHUP puts the edited policy in use; a broken file is refused and the policy in use stays',
    async (transport) => {
      const file = policyFile(`single-${transport}.json`, ALLOW);
      const server = await startCli(serveArgs('--policy', file, '--transport', transport, '--metrics-port', '0', ...tls));
      expect(await answers(server, 'svc-orders', 1)).toEqual([status.OK]);

      writeFileSync(file, DENY);
      let from = server.stderr.length;
      server.signal('SIGHUP');
      const [reloaded] = await waitForLines(server, from, single);
      expect(reloaded).toMatchObject({
        level: 'info',
        policyGeneration: 1,
        callers: 1,
        policyDigest: expect.stringMatching(/^sha256:[0-9a-f]{16}$/),
      });
      expect(JSON.stringify(reloaded)).not.toContain('svc-billing'); // a digest, never the policy's body
      expect(await answers(server, 'svc-orders', 1)).toEqual([status.PERMISSION_DENIED]);
      expect(await answers(server, 'svc-billing', 1)).toEqual([status.OK]);
      expect(await reloadCounts(server)).toEqual({ reloads: 1, failures: 0 });

      writeFileSync(file, BROKEN);
      from = server.stderr.length;
      server.signal('SIGHUP');
      expect(await waitForFailure(server, from)).toBe(
        `policy reload failed, keeping the policy in use: policy file ${file}: $.callers["${ORDERS}"].subject: is not a field (expected one of subjects, audiences, algorithms, maxTtlSeconds, claims, bind, rate); did you mean $.callers["${ORDERS}"].subjects?`,
      );
      expect(await answers(server, 'svc-orders', 1)).toEqual([status.PERMISSION_DENIED]);
      expect(await answers(server, 'svc-billing', 1)).toEqual([status.OK]);
      expect(await reloadCounts(server)).toEqual({ reloads: 1, failures: 1 });
      await server.stop();
    },
  );

  it('single process with --watch-keys: an edit of the policy file is put in use without a signal; a file that is not JSON is refused', async () => {
    const file = policyFile('watched.json', ALLOW);
    const server = await startCli(serveArgs('--policy', file, '--watch-keys', ...tls));
    expect(server.stdout).toMatch(/policy: 1 callers from .* \(sha256:[0-9a-f]{16}\), reloaded on SIGHUP and when it changes/);
    expect(await answers(server, 'svc-orders', 1)).toEqual([status.OK]);

    let from = server.stderr.length;
    writeFileSync(file, DENY);
    await waitForLines(server, from, single);
    expect(await answers(server, 'svc-orders', 1)).toEqual([status.PERMISSION_DENIED]);

    from = server.stderr.length;
    writeFileSync(file, '{"callers":');
    expect(await waitForFailure(server, from)).toContain(`policy file ${file}: $: not valid JSON`);
    expect(await answers(server, 'svc-billing', 1)).toEqual([status.OK]);
    await server.stop();
  });

  it.each(['http2', 'grpc-js'])(
    'a cluster of 2 on %s: the primary reads the file once and every worker enforces the reloaded policy',
    async (transport) => {
      const file = policyFile(`cluster-${transport}.json`, ALLOW);
      const server = await startCli(serveArgs('--policy', file, '--transport', transport, '--metrics-port', '0', ...tls), {
        env: { NODEMAXPROCS: '2' },
      });
      expect(server.workerPids).toHaveLength(2);
      expect(await answers(server, 'svc-orders', 4)).toEqual(Array(4).fill(status.OK));

      writeFileSync(file, DENY);
      let from = server.stderr.length;
      server.signal('SIGHUP');
      const lines = await waitForLines(server, from, worker);
      // Both workers applied generation 1 with the digest the primary logged. The primary logs
      // once every live process (the spare worker too) has acknowledged, which can come after
      // the serving workers' lines.
      const reloadedLine = (): Record<string, unknown> | undefined =>
        jsonLines(server, from).find((line) => line['message'] === 'policy reloaded');
      await waitUntil(() => reloadedLine() !== undefined, 20_000);
      const primary = reloadedLine();
      expect(primary).toMatchObject({ worker: 'primary', policyGeneration: 1 });
      for (const line of lines) expect(line).toMatchObject({ policyGeneration: 1, policyDigest: primary?.['policyDigest'] });

      // Fresh connections, spread over both workers (the audit lines name the worker that refused).
      from = server.stderr.length;
      expect(await answers(server, 'svc-orders', 6)).toEqual(Array(6).fill(status.PERMISSION_DENIED));
      const refusedBy = new Set(
        jsonLines(server, from)
          .filter((line) => line['message'] === 'policy: token refused')
          .map((line) => line['worker']),
      );
      expect(refusedBy).toEqual(new Set([0, 1]));

      writeFileSync(file, BROKEN);
      from = server.stderr.length;
      server.signal('SIGHUP');
      expect(await waitForFailure(server, from)).toContain(`policy file ${file}: $.callers["${ORDERS}"].subject: is not a field`);
      expect(jsonLines(server, from).filter((line) => String(line['message']).includes('reloaded the policy'))).toEqual([]);
      expect(await answers(server, 'svc-orders', 4)).toEqual(Array(4).fill(status.PERMISSION_DENIED));
      expect(await answers(server, 'svc-billing', 4)).toEqual(Array(4).fill(status.OK));
      expect(await reloadCounts(server)).toEqual({ reloads: 1, failures: 1 });
      await server.stop();
    },
  );
});
