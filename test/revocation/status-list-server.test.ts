/**
 * `statusList` end to end over loopback: a server issues tokens with a `status` claim and
 * serves the signed list on its discovery port and by GetStatusList; createRemoteVerifier
 * ({ issuerUrl }) checks tokens against it without calling VerifyJwt. The verifier reaches
 * the issuer through a counting HTTP proxy, whose origin is the issuer, so the tests can
 * count its fetches of the list.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../bench/kit/wait.js';
import { DEFAULT_STATUS_LIST_SIZE } from '../../src/revocation/status-list/issuer.js';
import type { Revocation, RevocationStore } from '../../src/contracts/revocation-store.js';
import {
  ANY_AUDIENCE,
  CallMetadata,
  type JwtServer,
  createJwtServer,
  createRemoteVerifier,
  generateKeys,
  silentLogger,
} from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';
import { fetchRaw } from '../../bench/kit/http.js';

const clients = new ClientPool();
const closers: Array<() => void> = [];
afterEach(() => {
  clients.closeAll();
  for (const close of closers.splice(0)) close();
});
afterAll(async () => {
  await closeAllServers();
  rmSync(dir, { recursive: true, force: true });
});

/** The revocations files (the store that keeps the list's index counter) and the admin secret. */
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-status-list-'));
const SECRET = 'status-list-admin-secret-0123';
const adminTokenFile = join(dir, 'admin-token');
writeFileSync(adminTokenFile, `${SECRET}\n`, { mode: 0o600 });
const admin = { metadata: new CallMetadata().set('authorization', `Bearer ${SECRET}`) };
let files = 0;
const freshFile = (): string => join(dir, `revocations-${++files}.jsonl`);

/** A proxy to the discovery port that counts GETs by path; its origin is the issuer. */
async function countingProxy(): Promise<{ issuer: string; counts: Map<string, number>; target: { port: number } }> {
  const counts = new Map<string, number>();
  const target = { port: 0 };
  const proxy = createServer((req, res) => {
    const path = req.url ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const upstream = httpRequest({ host: '127.0.0.1', port: target.port, path, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  closers.push(() => proxy.close());
  return { issuer: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, counts, target };
}

/**
 * A server with the status list and a revocations file, its issuer the proxy's origin,
 * counting the gRPC calls by method. `reuse` starts it again on an earlier one's proxy and file (a restart).
 */
async function start(ttl = 60, reuse?: { proxy: Awaited<ReturnType<typeof countingProxy>>; file: string }, blockSize?: number) {
  const proxy = reuse?.proxy ?? (await countingProxy());
  const file = reuse?.file ?? freshFile();
  const calls = new Map<string, number>();
  const server: JwtServer = trackServer(
    createJwtServer({
      keys: await sharedKeys(),
      issuer: proxy.issuer,
      httpPort: 0,
      statusList: true,
      statusListTtlSeconds: ttl,
      ...(blockSize !== undefined && { statusListBlockSize: blockSize }),
      revocations: file,
      adminTokenFile,
      logger: silentLogger,
      interceptors: [{ onCallStart: (call) => void calls.set(call.method, (calls.get(call.method) ?? 0) + 1) }],
    }),
  );
  const port = await server.listen('127.0.0.1:0');
  proxy.target.port = server.httpPort as number;
  const jwt = clients.jwt(port);
  const issue = async () => (await jwt.generateJwt({ algorithm: 'ES256', subject: 'ada' })).jwt;
  return { server, port, jwt, file, proxy, issuer: proxy.issuer, counts: proxy.counts, calls, issue };
}

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
}

const indexOf = (token: string): number => (payloadOf(token)['status'] as { status_list: { idx: number } }).status_list.idx;

const LIST_PATH = '/statuslists/1';

describe('statusList on the server', () => {
  it('gives every token its own index in the status claim, under the issuer', async () => {
    const { issue, issuer } = await start();
    const [a, b] = [payloadOf(await issue()), payloadOf(await issue())];
    expect(a['status']).toEqual({ status_list: { idx: expect.any(Number), uri: `${issuer}${LIST_PATH}` } });
    const idx = (p: Record<string, unknown>) => (p['status'] as { status_list: { idx: number } }).status_list.idx;
    expect(idx(b)).not.toBe(idx(a));
  });

  it('answers every GenerateJwt at saturation across 10 block boundaries: the next block is waited for, never refused', async () => {
    const BLOCK = 64;
    const { jwt, file } = await start(60, undefined, BLOCK);
    const CALLS = BLOCK * 10 + BLOCK / 2;
    // Far more calls in flight than half a block: each boundary is reached before the fsync'd reservation comes back.
    const answers = await Promise.allSettled(
      Array.from({ length: CALLS }, () => jwt.generateJwt({ algorithm: 'ES256', subject: 'ada' }).then((answer) => indexOf(answer.jwt))),
    );
    const failures = answers.filter((answer) => answer.status === 'rejected').map((answer) => String(answer.reason));
    expect(failures).toEqual([]);
    const indexes = answers.map((answer) => (answer as PromiseFulfilledResult<number>).value);
    expect(new Set(indexes).size).toBe(CALLS);
    // Every block came from the file's counter: one reservation line per block, none skipped but the last's spare.
    const marks = readFileSync(file, 'utf8').trim().split('\n').length;
    expect(marks).toBeGreaterThanOrEqual(11);
  });

  it('rolls a full list over to /statuslists/2, serves both on the discovery port and by GetStatusList, and revokes in each', async () => {
    // A store of one's own whose counter stands 8 short of the end of list 1.
    const revoked: Revocation[] = [];
    let counter = DEFAULT_STATUS_LIST_SIZE - 8;
    const store: RevocationStore = {
      kind: 'near-the-end',
      up: true,
      start: async () => undefined,
      add: async (revocation) => void revoked.push(revocation),
      close: async () => undefined,
      reserveStatusIndexes: async (count) => {
        const first = counter;
        counter += count;
        return first;
      },
    };
    const proxy = await countingProxy();
    const options = { keys: await sharedKeys(), issuer: proxy.issuer, httpPort: 0, statusList: true, statusListBlockSize: 8 };
    const server = trackServer(createJwtServer({ ...options, revocationStore: store, adminTokenFile, logger: silentLogger }));
    const port = await server.listen('127.0.0.1:0');
    proxy.target.port = server.httpPort as number;
    const jwt = clients.jwt(port);
    const tokens: string[] = [];
    for (let i = 0; i < 12; i++) tokens.push((await jwt.generateJwt({ algorithm: 'ES256', subject: 'ada' })).jwt);
    const refs = tokens.map((token) => (payloadOf(token)['status'] as { status_list: { idx: number; uri: string } }).status_list);
    expect(refs.map((ref) => ref.uri.slice(proxy.issuer.length))).toEqual([
      ...Array(8).fill(LIST_PATH),
      ...Array(4).fill('/statuslists/2'),
    ]);
    expect(refs.map((ref) => ref.idx)).toEqual([...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => DEFAULT_STATUS_LIST_SIZE - 8 + i), 0, 1, 2, 3]);
    const [lastOfFirst, firstOfSecond] = [tokens[7] as string, tokens[8] as string];
    await jwt.revokeJwt({ jwt: firstOfSecond }, admin);
    await jwt.revokeJwt({ jwt: lastOfFirst }, admin);
    expect(revoked.map((revocation) => revocation.statusIndex)).toEqual([DEFAULT_STATUS_LIST_SIZE, DEFAULT_STATUS_LIST_SIZE - 1]);
    for (const path of [LIST_PATH, '/statuslists/2']) {
      const answer = await fetchRaw(server.httpPort as number, path);
      expect(answer.status, path).toBe(200);
      expect(payloadOf(answer.body)['sub'], path).toBe(`${proxy.issuer}${path}`);
      expect((await jwt.getStatusList({ uri: `${proxy.issuer}${path}` })).token, path).toBe(answer.body);
    }
    expect(payloadOf((await jwt.getStatusList()).token)['sub']).toBe(`${proxy.issuer}/statuslists/2`);
    const verifier = createRemoteVerifier({ issuerUrl: proxy.issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    const verdicts = await Promise.all([tokens[6], lastOfFirst, firstOfSecond, tokens[9]].map((token) => verifier.verify(token as string)));
    expect(verdicts.map((verdict) => (verdict.valid ? 'valid' : verdict.reason))).toEqual(['valid', 'REVOKED', 'REVOKED', 'valid']);
  });

  it('refuses a status claim in claims_json: only the server names its list', async () => {
    const { port } = await start();
    await expect(clients.jwt(port).generateJwt({ algorithm: 'ES256', subject: 'ada', claims_json: '{"status":{}}' })).rejects.toThrow(
      /reserved claim "status"/,
    );
  });

  it('serves a statuslist+jwt that jose verifies with the JWK Set, with ETag, Cache-Control and 304, and the same token over GetStatusList', async () => {
    const { server, port, issuer } = await start(60);
    const answer = await fetchRaw(server.httpPort as number, LIST_PATH);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/statuslist+jwt');
    expect(answer.headers['cache-control']).toBe('public, max-age=15');
    const etag = answer.headers['etag'] as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect((await fetchRaw(server.httpPort as number, LIST_PATH, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect(decodeProtectedHeader(answer.body).typ).toBe('statuslist+jwt');
    const jwks = createRemoteJWKSet(new URL(`http://127.0.0.1:${server.httpPort}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(answer.body, jwks, { typ: 'statuslist+jwt', subject: `${issuer}${LIST_PATH}` });
    expect(payload['ttl']).toBe(60);
    expect(payload['status_list']).toMatchObject({ bits: 1 });

    const client = clients.jwt(port);
    expect((await client.getStatusList()).token).toBe(answer.body);
    expect((await client.getStatusList({ uri: `${issuer}${LIST_PATH}` })).token).toBe(answer.body);
    await expect(client.getStatusList({ uri: 'https://elsewhere.example/statuslists/1' })).rejects.toMatchObject({ status: 5 });
  });

  it('answers GetStatusList with FAILED_PRECONDITION when the list is off, and refuses statusList without httpPort', async () => {
    const server = trackServer(createJwtServer({ keys: await sharedKeys(), logger: silentLogger }));
    const port = await server.listen('127.0.0.1:0');
    await expect(clients.jwt(port).getStatusList({ uri: '' })).rejects.toMatchObject({ status: 9 });
    const keys = await sharedKeys();
    expect(() => createJwtServer({ keys, issuer: 'https://auth.example', statusList: true })).toThrow(/statusList: needs httpPort/);
  });

  it('refuses statusList without a store that keeps its index counter: indexes would repeat after a restart', async () => {
    const keys = await sharedKeys();
    const options = { keys, issuer: 'https://auth.example', httpPort: 0, statusList: true };
    expect(() => createJwtServer(options)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'statusList',
        message: expect.stringMatching(/statusList: needs revocations or revocationStore/),
      }),
    );
    // A store of one's own without reserveStatusIndexes keeps no counter either.
    const store = { kind: 'mine', up: true, start: async () => undefined, add: async () => undefined, close: async () => undefined };
    expect(() => createJwtServer({ ...options, revocationStore: store })).toThrow(/statusList: needs revocations or revocationStore/);
    expect(() => createJwtServer({ ...options, revocationStore: { ...store, reserveStatusIndexes: async () => 0 } })).not.toThrow();
  });
});

describe('createRemoteVerifier and the status list', () => {
  it('accepts an unrevoked token, refuses a revoked one with REVOKED, and never calls VerifyJwt', async () => {
    const { server, issuer, calls, issue } = await start();
    const [kept, revoked] = [await issue(), await issue()];
    server.service.statusList?.revoke((payloadOf(revoked)['status'] as { status_list: { idx: number } }).status_list.idx);
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect(await verifier.verify(kept)).toMatchObject({ valid: true });
    expect(await verifier.verify(revoked)).toMatchObject({ valid: false, reason: 'REVOKED' });
    expect(calls.get('/jwt.services.JwtService/VerifyJwt')).toBeUndefined();
  });

  it('uses the cached list within its ttl (one fetch), and learns of a revocation once the ttl has run out', async () => {
    const { server, issuer, counts, calls, issue } = await start(1);
    const token = await issue();
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    const verdicts = await Promise.all([1, 2, 3, 4, 5].map(() => verifier.verify(token)));
    expect(verdicts.every((result) => result.valid)).toBe(true);
    expect(counts.get(LIST_PATH)).toBe(1);
    server.service.statusList?.revoke((payloadOf(token)['status'] as { status_list: { idx: number } }).status_list.idx);
    // Within the ttl the cached list answers: the staleness bound docs/status-list.md states.
    expect(await verifier.verify(token)).toMatchObject({ valid: true });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await verifier.verify(token)).toMatchObject({ valid: false, reason: 'REVOKED' });
    expect(counts.get(LIST_PATH)).toBe(2);
    expect(calls.get('/jwt.services.JwtService/VerifyJwt')).toBeUndefined();
  });

  it("never fetches a list from an origin that is not the issuer's, unless allowed", async () => {
    const { issuer, counts, issue } = await start();
    const foreign = await countingProxy();
    const token = await issue();
    // The same token, seen by a verifier whose issuer is another origin: its list is foreign.
    const verifier = createRemoteVerifier(
      { jwksUrl: `${foreign.issuer}/.well-known/jwks.json` },
      { audience: ANY_AUDIENCE, logger: silentLogger },
    );
    foreign.target.port = Number(new URL(issuer).port); // the foreign origin proxies to the issuer's proxy
    const result = await verifier.verify(token);
    expect(result).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
    expect(counts.get(LIST_PATH)).toBeUndefined();
    const allowed = createRemoteVerifier(
      { jwksUrl: `${foreign.issuer}/.well-known/jwks.json` },
      { audience: ANY_AUDIENCE, logger: silentLogger, statusListOrigins: [issuer] },
    );
    expect(await allowed.verify(token)).toMatchObject({ valid: true });
  });

  it('fails closed when the list cannot be fetched and none is cached', async () => {
    const { server, issuer, issue } = await start();
    const token = await issue();
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    await verifier.refresh();
    await server.close({ graceMs: 0 });
    await expect(verifier.verify(token)).rejects.toMatchObject({
      code: 'ERR_GRPC_STATUS',
      status: 14,
      message: expect.stringContaining('status list'),
    });
  });
});

describe('statusList and key rotation', () => {
  it('refuses a key set without an asymmetric key, which could not sign the list, and keeps the keys in use', async () => {
    const { server } = await start();
    const before = server.service.keys;
    const hmacOnly = await generateKeys({ algorithms: ['HS256'] });
    expect(() => server.service.setKeys(hmacOnly)).toThrow(/asymmetric/);
    expect(server.service.keys).toBe(before);
    expect(() => createJwtServer({ keys: hmacOnly, issuer: 'https://auth.example', httpPort: 0, statusList: true })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'statusList' }),
    );
  });
});

describe('RevokeJwt and the status list', () => {
  it("revoke, then within the list's ttl the remote verifier refuses the token, with no call to VerifyJwt", async () => {
    const { jwt, file, issuer, calls, issue } = await start(1);
    const [kept, token] = [await issue(), await issue()];
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect(await verifier.verify(token)).toMatchObject({ valid: true });
    await jwt.revokeJwt({ jwt: token, reason: 'laptop stolen' }, admin);
    const revokedAt = Date.now();
    // The file keeps the token's index, so a restart marks it again.
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ jti: payloadOf(token)['jti'], statusIndex: indexOf(token) }));
    let result = await verifier.verify(token);
    await waitUntil(async () => !(result = await verifier.verify(token)).valid, 3_000, 50);
    expect(result).toMatchObject({ valid: false, reason: 'REVOKED' });
    // The bound is the ttl (1 s); the margin is the polling and a loaded machine.
    expect(Date.now() - revokedAt).toBeLessThan(1_000 + 500);
    expect(await verifier.verify(kept)).toMatchObject({ valid: true });
    expect(calls.get('/jwt.services.JwtService/VerifyJwt')).toBeUndefined();
  });

  it('marks a token revoked first by jti alone once it is revoked by the token, which alone names its index', async () => {
    const { server, jwt, issue } = await start();
    const token = await issue();
    const { jti, exp } = payloadOf(token) as { jti: string; exp: number };
    await jwt.revokeJwt({ jti, expires_at: exp }, admin);
    expect(server.service.statusList?.isRevoked(indexOf(token))).toBe(false);
    expect((await jwt.verifyJwt({ jwt: token })).reason).toBe('REVOKED');
    await jwt.revokeJwt({ jwt: token }, admin);
    expect(server.service.statusList?.isRevoked(indexOf(token))).toBe(true);
  });

  it('after a restart on the same file: indexes above every earlier one, and the earlier revocations marked again', async () => {
    const first = await start();
    const before = [await first.issue(), await first.issue()];
    await first.jwt.revokeJwt({ jwt: before[0] as string }, admin);
    await first.server.close({ graceMs: 0 });
    const second = await start(60, { proxy: first.proxy, file: first.file });
    const after = await second.issue();
    expect(indexOf(after)).toBeGreaterThan(Math.max(...before.map(indexOf)));
    expect(second.server.service.statusList?.isRevoked(indexOf(before[0] as string))).toBe(true);
    const verifier = createRemoteVerifier({ issuerUrl: second.issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect(await verifier.verify(before[0] as string)).toMatchObject({ valid: false, reason: 'REVOKED' });
    expect(await verifier.verify(before[1] as string)).toMatchObject({ valid: true });
    expect(await verifier.verify(after)).toMatchObject({ valid: true });
  });
});
