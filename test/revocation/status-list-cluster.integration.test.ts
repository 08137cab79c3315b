/**
 * `jwt-grpc serve --status-list` in cluster mode (NODEMAXPROCS=2): the primary hands each
 * worker its own blocks of status list indexes, so tokens from both workers never share
 * one (draft-ietf-oauth-status-list-20 section 13.3), and every worker serves the list;
 * a revocation on one worker reaches the list every worker serves; at saturation, with
 * small blocks, no call fails at a block boundary while a worker waits for the primary.
 * Fresh gRPC channels (a distinct user agent each) land on both workers in turn.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../bench/kit/wait.js';
import { type CliServer, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { ANY_AUDIENCE, CallMetadata, createRemoteVerifier, silentLogger } from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { fetchRaw } from '../../bench/kit/http.js';
import { freePort } from '../../bench/kit/ports.js';

const clients = new ClientPool();
let dir: string;
let cli: CliServer;
let httpPort: number;
let issuer: string;
const SECRET = 'status-list-admin-secret-0123';
const admin = { metadata: new CallMetadata().set('authorization', `Bearer ${SECRET}`) };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-status-list-'));
  const keysFile = join(dir, 'keys.json');
  expect((await runCli(['keys', 'generate', '--alg', 'ES256', '--out', keysFile])).code).toBe(0);
  httpPort = await freePort();
  issuer = `http://127.0.0.1:${httpPort}`;
  const adminFile = join(dir, 'admin-token');
  writeFileSync(adminFile, `${SECRET}\n`, { mode: 0o600 });
  const serve = serveArgs(
    '--keys',
    keysFile,
    '--issuer',
    issuer,
    '--http-port',
    String(httpPort),
    '--status-list',
    '--status-list-ttl',
    '1',
  );
  cli = await startCli([...serve, '--revocations', join(dir, 'revocations.jsonl'), '--admin-token-file', adminFile], {
    env: { NODEMAXPROCS: '2' },
  });
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
      const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
        status: { status_list: { idx: number; uri: string } };
      };
      expect(payload.status.status_list.uri).toBe(`${issuer}/statuslists/1`);
      return payload.status.status_list.idx;
    });
    expect(new Set(indexes).size).toBe(indexes.length);
    // Two workers, two blocks: indexes from the first block (0..4095) and from the second.
    expect(indexes.some((idx) => idx < 4096)).toBe(true);
    expect(indexes.some((idx) => idx >= 4096)).toBe(true);

    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    for (const token of tokens.slice(0, 4)) expect(await verifier.verify(token)).toMatchObject({ valid: true });
  });

  it('revoke on one worker, then within the ttl the remote verifier refuses the token, with no call to VerifyJwt', async () => {
    const tokens = await Promise.all(
      Array.from(
        { length: 4 },
        async (_, i) =>
          (
            await clients
              .jwt(cli.port, { channelOptions: { 'grpc.primary_user_agent': `revoke-${i}` } })
              .generateJwt({ algorithm: 'ES256', subject: 'ada' })
          ).jwt,
      ),
    );
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    for (const token of tokens) expect(await verifier.verify(token)).toMatchObject({ valid: true });
    // The verifier only fetches over HTTP (the list and the JWK Set): it has no gRPC channel to call VerifyJwt on.
    for (const [i, token] of tokens.entries()) {
      if (i % 2 === 0)
        await clients.jwt(cli.port, { channelOptions: { 'grpc.primary_user_agent': `revoker-${i}` } }).revokeJwt({ jwt: token }, admin);
    }
    const revokedAt = Date.now();
    let results: Awaited<ReturnType<typeof verifier.verify>>[] = [];
    await waitUntil(
      async () => {
        results = await Promise.all(tokens.map((token) => verifier.verify(token)));
        return !results.some((result, i) => result.valid === (i % 2 === 0));
      },
      3_000,
      50,
    );
    expect(results.map((result) => (result.valid ? 'valid' : result.reason))).toEqual(['REVOKED', 'valid', 'REVOKED', 'valid']);
    expect(Date.now() - revokedAt).toBeLessThan(1_000 + 500);
    // Every worker's list has them (fetches land on the workers in turn): one bit per token, least significant first.
    const indexes = tokens.map(
      (token) =>
        (JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { status: { status_list: { idx: number } } })
          .status.status_list.idx,
    );
    for (const answer of await Promise.all(Array.from({ length: 6 }, () => fetchRaw(httpPort, '/statuslists/1')))) {
      const { status_list } = JSON.parse(Buffer.from(answer.body.split('.')[1] as string, 'base64url').toString()) as {
        status_list: { lst: string };
      };
      const bits = inflateSync(Buffer.from(status_list.lst, 'base64url'));
      expect(indexes.map((idx) => ((bits[idx >> 3] as number) >> (idx & 7)) & 1)).toEqual([1, 0, 1, 0]);
    }
  });

  it('serves the list from every worker', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => fetchRaw(httpPort, '/statuslists/1')));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/statuslist+jwt');
    }
  });
});

describe('jwt-grpc serve --status-list with two workers and blocks of 64 indexes', () => {
  it('answers every GenerateJwt at saturation across 10 block boundaries of each worker', async () => {
    const BLOCK = 64;
    const smallHttpPort = await freePort();
    const small = await startCli(
      [
        ...serveArgs('--keys', join(dir, 'keys.json'), '--issuer', `http://127.0.0.1:${smallHttpPort}`),
        ...['--http-port', String(smallHttpPort), '--status-list'],
        '--status-list-block',
        String(BLOCK),
        '--revocations',
        join(dir, 'small-blocks.jsonl'),
      ],
      { env: { NODEMAXPROCS: '2' } },
    );
    const channels = Array.from({ length: 8 }, (_, i) =>
      clients.jwt(small.port, { channelOptions: { 'grpc.primary_user_agent': `saturate-${i}` } }),
    );
    const CALLS = BLOCK * 10 * 2 + BLOCK;
    const answers = await Promise.allSettled(
      Array.from({ length: CALLS }, async (_, i) => {
        const { jwt } = await (channels[i % channels.length] as (typeof channels)[number]).generateJwt({
          algorithm: 'ES256',
          subject: 'ada',
        });
        return (
          JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as { status: { status_list: { idx: number } } }
        ).status.status_list.idx;
      }),
    );
    expect(answers.filter((answer) => answer.status === 'rejected').map((answer) => String(answer.reason))).toEqual([]);
    const indexes = answers.map((answer) => (answer as PromiseFulfilledResult<number>).value);
    expect(new Set(indexes).size).toBe(CALLS);
  });
});

describe('jwt-grpc serve --status-list with two workers, its counter near the end of list 1', () => {
  it('rolls over to /statuslists/2 across workers; every worker serves both lists and marks a revocation in list 2', async () => {
    const file = join(dir, 'near-the-end.jsonl');
    // A reservation mark 64 short of the end of list 1, as a server that has issued that many would have left.
    writeFileSync(file, `${JSON.stringify({ statusIndexes: (1 << 20) - 64 })}\n`);
    const nearHttpPort = await freePort();
    const nearIssuer = `http://127.0.0.1:${nearHttpPort}`;
    const near = await startCli(
      [
        ...serveArgs('--keys', join(dir, 'keys.json'), '--issuer', nearIssuer),
        ...['--http-port', String(nearHttpPort), '--status-list', '--status-list-block', '8', '--revocations', file],
        ...['--admin-token-file', join(dir, 'admin-token')],
      ],
      { env: { NODEMAXPROCS: '2' } },
    );
    const channels = Array.from({ length: 8 }, (_, i) =>
      clients.jwt(near.port, { channelOptions: { 'grpc.primary_user_agent': `near-${i}` } }),
    );
    const tokens: string[] = [];
    for (let i = 0; i < 96; i++)
      tokens.push(
        (await (channels[i % channels.length] as (typeof channels)[number]).generateJwt({ algorithm: 'ES256', subject: 'ada' })).jwt,
      );
    const refOf = (token: string) =>
      (
        JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
          status: { status_list: { idx: number; uri: string } };
        }
      ).status.status_list;
    expect(new Set(tokens.map((token) => refOf(token).uri))).toEqual(
      new Set([`${nearIssuer}/statuslists/1`, `${nearIssuer}/statuslists/2`]),
    );
    const inSecond = tokens.find((token) => refOf(token).uri.endsWith('/statuslists/2')) as string;
    await (channels[0] as (typeof channels)[number]).revokeJwt({ jwt: inSecond }, admin);
    const idx = refOf(inSecond).idx;
    const bitsOnEveryWorker = async (): Promise<number[]> =>
      Promise.all(
        Array.from({ length: 6 }, async () => {
          const answer = await fetchRaw(nearHttpPort, '/statuslists/2');
          const { status_list } = JSON.parse(Buffer.from(answer.body.split('.')[1] as string, 'base64url').toString()) as {
            status_list: { lst: string };
          };
          return ((inflateSync(Buffer.from(status_list.lst, 'base64url'))[idx >> 3] as number) >> (idx & 7)) & 1;
        }),
      );
    expect(await waitUntil(async () => (await bitsOnEveryWorker()).every((bit) => bit === 1), 3_000, 50)).toBe(true);
    for (const answer of await Promise.all(Array.from({ length: 6 }, () => fetchRaw(nearHttpPort, '/statuslists/1'))))
      expect(answer.status).toBe(200);
    const verifier = createRemoteVerifier({ issuerUrl: nearIssuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect(await verifier.verify(inSecond)).toMatchObject({ valid: false, reason: 'REVOKED' });
    expect(await verifier.verify(tokens[0] as string)).toMatchObject({ valid: true });
  });
});
