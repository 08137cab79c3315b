/**
 * `jwt-grpc serve --status-list` in cluster mode (NODEMAXPROCS=2): the primary hands each
 * worker its own blocks of status list indexes, so tokens from both workers never share
 * one (draft-ietf-oauth-status-list-20 section 13.3), and every worker serves the list.
 * Fresh gRPC channels (a distinct user agent each) land on both workers in turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { createRemoteVerifier, silentLogger } from '../../src/lib.js';
import { ClientPool } from '../helpers/client.js';
import { fetchRaw, freePort } from '../discovery/helpers.js';

const clients = new ClientPool();
let dir: string;
let cli: CliServer;
let httpPort: number;
let issuer: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-status-list-'));
  const keysFile = join(dir, 'keys.json');
  expect((await runCli(['keys', 'generate', '--alg', 'ES256', '--out', keysFile])).code).toBe(0);
  httpPort = await freePort();
  issuer = `http://127.0.0.1:${httpPort}`;
  cli = await startCli(serveArgs('--keys', keysFile, '--issuer', issuer, '--http-port', String(httpPort), '--status-list'), { env: { NODEMAXPROCS: '2' } });
});

afterAll(async () => {
  clients.closeAll();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('jwt-grpc serve --status-list with two workers', () => {
  it('gives tokens from both workers distinct indexes, from blocks the primary hands out', async () => {
    const tokens = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const client = clients.jwt(cli.port, { channelOptions: { 'grpc.primary_user_agent': `status-${i}` } });
        return (await client.generateJwt({ algorithm: 'ES256', subject: 'ada' })).jwt;
      }),
    );
    const indexes = tokens.map((token) => {
      const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { status: { status_list: { idx: number; uri: string } } };
      expect(payload.status.status_list.uri).toBe(`${issuer}/statuslists/1`);
      return payload.status.status_list.idx;
    });
    expect(new Set(indexes).size).toBe(indexes.length);
    // Two workers, two blocks: indexes from the first block (0..4095) and from the second.
    expect(indexes.some((idx) => idx < 4096)).toBe(true);
    expect(indexes.some((idx) => idx >= 4096)).toBe(true);

    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { logger: silentLogger });
    for (const token of tokens.slice(0, 4)) expect(await verifier.verify(token)).toMatchObject({ valid: true });
  });

  it('serves the list from every worker', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => fetchRaw(httpPort, '/statuslists/1')));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/statuslist+jwt');
    }
  });
});
