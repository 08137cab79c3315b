/**
 * Verifiers nobody here wrote check jwt-grpc's tokens through the issuer URL alone, over
 * real HTTP on loopback: jose (createRemoteJWKSet + jwtVerify), PyJWT (PyJWKClient) and
 * coreos/go-oidc v3 (NewProvider + Verifier, as Kubernetes does), in a single process and
 * in a cluster of two workers, before and after a staged rotation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { createJwtServer, silentLogger } from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';
import { stagedRotation } from './helpers.js';
import { freePort } from '../../bench/kit/ports.js';
import { type ForeignVerifier, goOidcVerifier, pyjwtVerifier } from './verifiers.js';
import { waitUntil } from '../../bench/kit/wait.js';

const clients = new ClientPool();
let verifiers: Record<'PyJWT' | 'go-oidc', ForeignVerifier | string>;

beforeAll(async () => {
  const [pyjwt, goOidc] = await Promise.all([pyjwtVerifier(), goOidcVerifier()]);
  verifiers = { PyJWT: pyjwt, 'go-oidc': goOidc };
}, 600_000);

afterAll(async () => {
  clients.closeAll();
  await closeAllServers();
  await killAll();
});

/** What a deployment gives the scenario: tokens from its gRPC port, and its two rotation phases. */
interface Deployment {
  readonly issuer: string;
  token(subject: string): Promise<string>;
  stage(): Promise<void>;
  activate(): Promise<void>;
}

/** Every verifier accepts `tokens` (subjects in order) through discovery of `issuer` alone. */
async function expectAllVerify(issuer: string, tokens: readonly string[], subjects: readonly string[]): Promise<void> {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
  for (const [i, token] of tokens.entries()) expect((await jwtVerify(token, jwks, { issuer })).payload.sub).toBe(subjects[i]);
  for (const [name, verifier] of Object.entries(verifiers)) {
    if (typeof verifier === 'string') continue;
    const lines = await verifier.verify(issuer, tokens);
    expect(
      lines.map((line) => line.split(' ').slice(0, 2).join(' ')),
      `${name}: ${lines.join(' | ')}`,
    ).toEqual(subjects.map((s) => `ok ${s}`));
  }
}

async function scenario(deployment: Deployment): Promise<void> {
  for (const [name, verifier] of Object.entries(verifiers)) if (typeof verifier === 'string') console.warn(`skipped ${name}: ${verifier}`);
  const before = await deployment.token('ada');
  await expectAllVerify(deployment.issuer, [before], ['ada']);
  await deployment.stage();
  await deployment.activate();
  const after = await deployment.token('bob');
  expect(after.split('.')[0]).not.toBe(before.split('.')[0]); // another kid in the header
  await expectAllVerify(deployment.issuer, [before, after], ['ada', 'bob']);
  // And they do check: a token whose signature was altered is refused by each.
  const forged = `${after.slice(0, -6)}${after.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}`;
  await expect(jwtVerify(forged, createRemoteJWKSet(new URL(`${deployment.issuer}/.well-known/jwks.json`)))).rejects.toThrow();
  for (const verifier of Object.values(verifiers)) {
    if (typeof verifier !== 'string') expect((await verifier.verify(deployment.issuer, [forged]))[0]).toMatch(/^fail /);
  }
}

describe('foreign verifiers', () => {
  it('verify tokens of a single-process server before and after a staged rotation', async () => {
    const httpPort = await freePort();
    const issuer = `http://127.0.0.1:${httpPort}`;
    const keys = await sharedKeys();
    const server = trackServer(createJwtServer({ keys, issuer, httpPort, logger: silentLogger }));
    const port = await server.listen('127.0.0.1:0');
    const client = clients.jwt(port);
    const { staged, activated } = await stagedRotation(keys);
    await scenario({
      issuer,
      token: async (subject) => (await client.generateJwt({ algorithm: 'ES256', subject })).jwt,
      stage: async () => server.service.setKeys(staged),
      activate: async () => server.service.setKeys(activated),
    });
  }, 60_000);

  it('verify tokens of a cluster of two workers before and after a staged rotation (SIGHUP)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-foreign-'));
    try {
      const keysFile = join(dir, 'keys.json');
      expect(
        (
          await runCli([
            'keys',
            'generate',
            '--alg',
            'ES256',
            '--alg',
            'RS256',
            '--kid',
            'es256-old',
            '--kid',
            'rs256-old',
            '--out',
            keysFile,
          ])
        ).code,
      ).toBe(0);
      const httpPort = await freePort();
      const issuer = `http://127.0.0.1:${httpPort}`;
      const cli = await startCli(serveArgs('--keys', keysFile, '--issuer', issuer, '--http-port', String(httpPort)), {
        env: { NODEMAXPROCS: '2' },
      });
      let round = 0;
      // A connection of its own per token: node:cluster spreads them over both workers.
      const token = async (subject: string): Promise<string> => {
        round += 1;
        return (
          await clients
            .jwt(cli.port, { channelOptions: { 'grpc.primary_user_agent': `foreign-${round}` } })
            .generateJwt({ algorithm: 'ES256', subject })
        ).jwt;
      };
      const phase = async (...args: string[]): Promise<void> => {
        expect((await runCli(['keys', 'rotate', '--keys', keysFile, ...args])).code).toBe(0);
        const reloads = (cli.stderr.match(/reloaded keys/g) ?? []).length;
        process.kill(cli.pid, 'SIGHUP');
        await waitUntil(() => (cli.stderr.match(/reloaded keys/g) ?? []).length >= reloads + 2, 10_000, 50);
      };
      await scenario({
        issuer,
        token,
        stage: () => phase('--alg', 'ES256', '--stage', '--kid', 'es256-new'),
        activate: () => phase('--activate', 'es256-new'),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
