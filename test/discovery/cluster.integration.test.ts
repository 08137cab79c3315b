/**
 * The discovery port in cluster mode through the CLI (NODEMAXPROCS=2): one port, every
 * worker the same documents and ETag; a staged rotation reloaded with SIGHUP changes the
 * set and the ETag on every worker, and jose verifies tokens before and after it.
 *
 * node:cluster hands each new connection to the next worker, so requests on fresh
 * connections (agent: false) reach both workers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../bench/kit/wait.js';
import { type CliServer, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { fetchRaw } from '../../bench/kit/http.js';
import { freePort } from '../../bench/kit/ports.js';

const clients = new ClientPool();
let dir: string;
let keysFile: string;
let cli: CliServer;
let httpPort: number;
let issuer: string;

/** The ETags the workers answer on `count` fresh connections. */
async function etags(count: number): Promise<Set<string>> {
  const answers = await Promise.all(Array.from({ length: count }, () => fetchRaw(httpPort, '/.well-known/jwks.json')));
  return new Set(answers.map((answer) => answer.headers.etag as string));
}

async function rotate(...args: string[]): Promise<void> {
  const run = await runCli(['keys', 'rotate', '--keys', keysFile, ...args]);
  expect(run.code, run.stderr).toBe(0);
  process.kill(cli.pid, 'SIGHUP');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-discovery-'));
  keysFile = join(dir, 'keys.json');
  expect((await runCli(['keys', 'generate', '--alg', 'ES256', '--alg', 'RS256', '--out', keysFile])).code).toBe(0);
  httpPort = await freePort();
  issuer = `http://127.0.0.1:${httpPort}`;
  cli = await startCli(serveArgs('--keys', keysFile, '--issuer', issuer, '--http-port', String(httpPort)), { env: { NODEMAXPROCS: '2' } });
});

afterAll(async () => {
  clients.closeAll();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('jwt-grpc serve --http-port', () => {
  it('refuses to start without --issuer, naming it, and takes the port from JWT_GRPC_HTTP_PORT too', async () => {
    const run = await runCli(serveArgs('--http-port', '0'));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--issuer: is required to serve discovery/);
    const fromEnv = await runCli(serveArgs(), { env: { JWT_GRPC_HTTP_PORT: '0' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/--issuer: is required/);
  });
});

describe('discovery in a cluster of two workers', () => {
  it('announces the discovery URL and serves one set with one ETag from every worker', async () => {
    expect(cli.stdout).toContain(`discovery: http://127.0.0.1:${httpPort}/.well-known/openid-configuration`);
    expect((await etags(8)).size).toBe(1);
    const configuration = JSON.parse((await fetchRaw(httpPort, '/.well-known/openid-configuration')).body);
    expect(configuration.issuer).toBe(issuer);
    expect(configuration.jwks_uri).toBe(`${issuer}/.well-known/jwks.json`);
  });

  it('changes the set and the ETag on every worker after a staged rotation reloaded with SIGHUP; jose verifies before and after', async () => {
    const client = clients.jwt(cli.port);
    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`), { cooldownDuration: 0 });
    const before = await client.generateJwt({ algorithm: 'ES256', subject: 'ada' });
    expect((await jwtVerify(before.jwt, jwks, { issuer })).payload.sub).toBe('ada');
    const [etag0] = await etags(1);

    await rotate('--alg', 'ES256', '--stage', '--kid', 'es256-next');
    expect(await waitUntil(async () => !(await etags(4)).has(etag0 as string), 10_000), 'the staged key on every worker').toBe(true);
    const staged = await etags(8);
    expect(staged.size).toBe(1);
    const body = JSON.parse((await fetchRaw(httpPort, '/.well-known/jwks.json')).body);
    expect(body.keys.map((key: { kid: string }) => key.kid)).toContain('es256-next');

    await rotate('--activate', 'es256-next');
    const signsWithNewKey = async (): Promise<boolean> =>
      (
        await clients
          .jwt(cli.port, { channelOptions: { 'grpc.primary_user_agent': `probe-${Math.random()}` } })
          .generateJwt({ algorithm: 'ES256', subject: 'bob' })
      ).kid === 'es256-next';
    expect(await waitUntil(signsWithNewKey, 10_000), 'the activated key signing').toBe(true);
    // Activation changes which key signs, not the published set: the ETag stays, verifiers keep their cache.
    expect(await etags(8)).toEqual(staged);
    // Fresh connections reach both workers: each signs with the new key.
    for (let i = 0; i < 4; i += 1) {
      const after = await clients
        .jwt(cli.port, { channelOptions: { 'grpc.primary_user_agent': `discovery-${i}` } })
        .generateJwt({ algorithm: 'ES256', subject: 'bob' });
      const verified = await jwtVerify(after.jwt, jwks, { issuer });
      expect(verified.protectedHeader.kid).toBe('es256-next');
    }
    expect((await jwtVerify(before.jwt, jwks, { issuer })).payload.sub).toBe('ada');
  });
});
