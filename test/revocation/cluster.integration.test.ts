/**
 * Revocation through the CLI in a cluster of two workers, on each transport: `jwt-grpc
 * revoke` on one connection, and VerifyJwt over new connections, which node:cluster
 * hands to each worker in turn, answers REVOKED at once (the primary broadcasts before it
 * answers the asking worker). The revocation survives a restart of the whole cluster from
 * its --revocations file.
 *
 * Which worker served a connection shows in its subject pool: each worker has its own
 * round-robin position, so the first subject-less GenerateJwt on each worker gets the
 * pool's first subject (as in test/cluster/cluster.integration.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SUBJECTS_FILE } from '../../bench/kit/paths.js';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { exportKeys, generateKeys } from '../../src/lib/index.js';
import { ClientPool, type JwtClient, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';

const SUBJECTS = JSON.parse(readFileSync(SUBJECTS_FILE, 'utf8')) as string[];
const FIRST_SUBJECT = SUBJECTS[0] as string;
const SECRET = 'cluster-admin-secret-0123456789';

const clients = new ClientPool();
let channelCount = 0;
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-revoke-cluster-'));
const adminFile = join(dir, 'admin-token');
writeFileSync(adminFile, `${SECRET}\n`, { mode: 0o600 });
const keysFile = join(dir, 'keys.json');

/** A client on a connection of its own. */
function freshClient(port: number): JwtClient {
  channelCount += 1;
  return clients.jwt(port, { channelOptions: { 'grpc.primary_user_agent': `revoke-cluster-test-${channelCount}` } });
}

afterAll(async () => {
  clients.closeAll();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  it('a revocation on one connection is REVOKED on new connections to both workers at once, and after a restart', async () => {
    writeFileSync(keysFile, JSON.stringify(exportKeys(await generateKeys({ algorithms: ['HS256'] }), { includePrivate: true })));
    const revocations = join(dir, `revocations-${transport}.jsonl`);
    const args = serveArgs(
      ...transportArgs(transport),
      '--keys',
      keysFile,
      '--subjects',
      SUBJECTS_FILE,
      '--revocations',
      revocations,
      '--admin-token-file',
      adminFile,
      '--metrics-port',
      '0',
    );
    const cli = await startCli(args, { env: { NODEMAXPROCS: '2' } });
    expect(cli.stdout).toContain(`  revocations: file ${revocations}; RevokeJwt for admin secret; jti on\n`);
    const made = await freshClient(cli.port).generateJwt({ algorithm: 'HS256', subject: 'ada' });

    const revoked = await runCli([
      'revoke',
      '--target',
      `127.0.0.1:${cli.port}`,
      '--admin-token-file',
      adminFile,
      '--reason',
      'test',
      made.jwt,
    ]);
    expect(revoked.stderr).toBe('');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true, expires_at: made.expires_at + 5 });
    const answeredAt = performance.now();

    // New connections, round robin over the workers: each one's first VerifyJwt says REVOKED.
    const workersSeen = new Set<number>();
    const elapsed: number[] = [];
    for (let i = 0; i < 6; i++) {
      const client = freshClient(cli.port);
      const verdict = await client.verifyJwt({ jwt: made.jwt });
      elapsed.push(performance.now() - answeredAt);
      expect(verdict.reason, `connection ${i}`).toBe('REVOKED');
      if ((await client.generateJwt({ algorithm: 'HS256' })).sub === FIRST_SUBJECT) workersSeen.add(i);
    }
    expect(workersSeen.size, 'connections served by distinct workers').toBe(2);
    // The first new connection (and its TLS-free handshake) answered within 100 ms of the revoke's answer.
    expect(elapsed[0]).toBeLessThan(100);

    // The CLI by jti and exp, and its refusal without the secret.
    const other = await freshClient(cli.port).generateJwt({ algorithm: 'HS256', subject: 'bob' });
    const jti = decodeJwt(other.jwt).payload['jti'] as string;
    const refused = await runCli(['revoke', '--target', `127.0.0.1:${cli.port}`, '--jti', jti, '--exp', String(other.expires_at)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/UNAUTHENTICATED|admin secret/);
    expect(refused.stderr + refused.stdout).not.toContain(SECRET);
    const byJti = await runCli([
      'revoke',
      '--target',
      `127.0.0.1:${cli.port}`,
      '--admin-token-file',
      adminFile,
      '--jti',
      jti,
      '--exp',
      String(other.expires_at),
    ]);
    expect(byJti.code).toBe(0);

    // The primary serves the store's gauge and the workers' counts, summed.
    const metricsUrl = /metrics: (http:\S+)/.exec(cli.stdout)?.[1] as string;
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/^jwt_grpc_revocation_store_up\{store="file"\} 1$/m);
    expect(metrics).toMatch(/^jwt_grpc_revocations_total\{outcome="revoked"\} 2$/m);
    expect(metrics).toMatch(/^jwt_grpc_revocations_total\{outcome="unauthenticated"\} 1$/m);

    await cli.stop();
    clients.closeAll();
    expect(readFileSync(revocations, 'utf8').trim().split('\n')).toHaveLength(2);
    const restarted = await startCli(args, { env: { NODEMAXPROCS: '2' } });
    for (let i = 0; i < 4; i++) {
      const client = freshClient(restarted.port);
      expect((await client.verifyJwt({ jwt: made.jwt })).reason).toBe('REVOKED');
      expect((await client.verifyJwt({ jwt: other.jwt })).reason).toBe('REVOKED');
    }
    await restarted.stop();
  });
});
