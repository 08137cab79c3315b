/**
 * JwtService on the own transport through clients nobody here wrote, each answer held to
 * grpc-js's on the same server (the package's client, on grpc-js): connect-node's three
 * transports (Connect and gRPC-Web over HTTP/1.1 and HTTP/2, gRPC over HTTP/2), connect-go's
 * client (connectrpc.com/connect v1.21.1, `test/transport/connect-go`, built with Go) with each
 * protocol, and curl: a Connect POST in JSON and a Connect GET of GetJwks on the same port.
 * Same claims, same JWKS and status list, same refusals with the same codes and messages.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import type { DescService } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_GO_BUILD_TIMEOUT_MS, goBuild } from '../../bench/kit/go-build.js';
import { type CommandRun, runToExit } from '../../bench/kit/launcher.js';
import { ClientPool, callError, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import { findOnPath } from '../../bench/kit/exec.js';
import { repoPath } from '../../bench/kit/paths.js';
import { DESCRIPTOR_SET_PATH } from '../../src/documents/descriptor-set.js';
import { JWT_SERVICE, type LooseJwtClient, expectAnswersAsGrpc } from './helpers/protocol-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-connect-clients-'));
const SECRET = 'connect-clients-admin-secret-0123';
const adminTokenFile = join(dir, 'admin-token');
writeFileSync(adminTokenFile, `${SECRET}\n`, { mode: 0o600 });
const clients = new ClientPool();
const CONNECT_GO_DIR = repoPath('test', 'transport', 'connect-go');
const CONNECT_GO_BINARY = join(CONNECT_GO_DIR, 'connect-go-client');

afterAll(async () => {
  clients.closeAll();
  await closeAllServers();
  rmSync(dir, { recursive: true, force: true });
});

/** The issuer under test: status list, revocations and an admin secret, so all five methods answer. */
const served = (async () => {
  const { port } = await startServer({
    transport: 'http2',
    keys: await sharedKeys(),
    issuer: 'https://issuer.example',
    httpPort: 0,
    statusList: true,
    revocations: join(dir, 'revocations.jsonl'),
    adminTokenFile,
  });
  return port;
})();

/** Requests every client sends that must be refused, with the refusal grpc-js gets. */
const REFUSED = {
  badAlgorithm: { method: 'GenerateJwt', request: { algorithm: 'NONE256' } },
  revokeWithoutSecret: { method: 'RevokeJwt', request: { jti: 'j', expires_at: 4_102_444_800 } },
} as const;

/** How grpc-js's client is refused each of {@link REFUSED}. */
async function grpcRefusals(port: number): Promise<Record<keyof typeof REFUSED, { code: number; message: string }>> {
  const grpc = clients.jwt(port);
  const bad = await callError(grpc.generateJwt({ algorithm: 'NONE256' }));
  const revoke = await callError(grpc.revokeJwt({ jti: 'j', expires_at: 4_102_444_800 }));
  return { badAlgorithm: { code: bad.code, message: bad.details }, revokeWithoutSecret: { code: revoke.code, message: revoke.details } };
}

describe("connect-node's transports", () => {
  const kinds = [
    { name: 'gRPC over HTTP/2', make: (baseUrl: string) => createGrpcTransport({ baseUrl }) },
    { name: 'Connect over HTTP/1.1', make: (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: '1.1' }) },
    { name: 'Connect over HTTP/2', make: (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: '2' }) },
    { name: 'gRPC-Web over HTTP/1.1', make: (baseUrl: string) => createGrpcWebTransport({ baseUrl, httpVersion: '1.1' }) },
    { name: 'gRPC-Web over HTTP/2', make: (baseUrl: string) => createGrpcWebTransport({ baseUrl, httpVersion: '2' }) },
  ];

  it.each(kinds)('$name: all five methods answer as over grpc-js, and refuse as it does', async ({ make }) => {
    const port = await served;
    const client = createClient(JWT_SERVICE, make(`http://127.0.0.1:${port}`)) as Client<DescService> as unknown as LooseJwtClient;
    await expectAnswersAsGrpc(client, clients.jwt(port), SECRET);
    const refusals = await grpcRefusals(port);
    const refusal = async (promise: Promise<unknown>) => {
      const err = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConnectError);
      return { code: (err as ConnectError).code as number, message: (err as ConnectError).rawMessage };
    };
    expect(await refusal(client.generateJwt({ algorithm: 'NONE256' }))).toEqual(refusals.badAlgorithm);
    expect(await refusal(client.revokeJwt({ jti: 'j', expiresAt: 4_102_444_800n }))).toEqual(refusals.revokeWithoutSecret);
    expect(refusals.revokeWithoutSecret.code).toBe(Code.Unauthenticated);
  });
});

/** One call for the Go client: method, proto3 JSON request, headers. */
interface GoCall {
  readonly method: string;
  readonly request: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}
interface GoAnswer {
  readonly response?: Record<string, unknown>;
  readonly code?: number;
  readonly message?: string;
}

const goBuilt = findOnPath('go') === null ? 'go is not on PATH' : undefined;
if (goBuilt !== undefined) console.warn(`connect-go client test skipped: ${goBuilt}`);

describe.skipIf(goBuilt !== undefined)("connect-go's client (connectrpc.com/connect v1.21.1)", () => {
  beforeAll(() => {
    // Built by `npm run tools` too: here the build cache makes it a second.
    expect(goBuild(CONNECT_GO_DIR, CONNECT_GO_BINARY, 'the connect-go client', TEST_GO_BUILD_TIMEOUT_MS)).toEqual({ ok: true });
  }, TEST_GO_BUILD_TIMEOUT_MS + 10_000);

  async function runGo(port: number, protocol: string, http: string, calls: readonly GoCall[]): Promise<GoAnswer[]> {
    const args = ['-url', `http://127.0.0.1:${port}`, '-protocol', protocol, '-http', http, '-descriptors', DESCRIPTOR_SET_PATH];
    const run: CommandRun = await runToExit(CONNECT_GO_BINARY, args, { timeoutMs: 20_000, input: JSON.stringify(calls) });
    expect(run.code, `${run.stderr}`).toBe(0);
    return JSON.parse(run.stdout) as GoAnswer[];
  }

  it.each([
    ['connect', '1'],
    ['connect', '2'],
    ['grpcweb', '1'],
    ['grpcweb', '2'],
    ['grpc', '2'],
  ])('%s over HTTP/%s: all five methods answer as over grpc-js, and refuse as it does', async (protocol, http) => {
    const port = await served;
    const grpc = clients.jwt(port);
    const toVerify = await grpc.generateJwt({ algorithm: 'ES256', subject: 'ada', claims_json: '{"role":"reader"}' });
    const toRevoke = await grpc.generateJwt({ algorithm: 'ES256', subject: 'bob' });
    const admin = { authorization: `Bearer ${SECRET}` };
    // Before the Go client's RevokeJwt, which changes the list.
    const listBefore = (await grpc.getStatusList({})).token;
    const [issued, verified, jwks, statusList, revoked, badAlgorithm, revokeWithoutSecret] = await runGo(port, protocol, http, [
      { method: 'GenerateJwt', request: { algorithm: 'ES256', subject: 'ada', ttlSeconds: '60' } },
      { method: 'VerifyJwt', request: { jwt: toVerify.jwt } },
      { method: 'GetJwks', request: {} },
      { method: 'GetStatusList', request: {} },
      { method: 'RevokeJwt', request: { jwt: toRevoke.jwt }, headers: admin },
      { method: REFUSED.badAlgorithm.method, request: { algorithm: 'NONE256' } },
      { method: REFUSED.revokeWithoutSecret.method, request: { jti: 'j', expiresAt: '4102444800' } },
    ]);
    const token = issued?.response?.jwt as string;
    expect(issued?.response).toMatchObject({ sub: 'ada', kid: decodeJwt(token).header['kid'] });
    expect(await grpc.verifyJwt({ jwt: token })).toMatchObject({ valid: true, sub: 'ada' });
    const overGrpc = await grpc.verifyJwt({ jwt: toVerify.jwt });
    expect(verified?.response).toEqual({ valid: true, sub: 'ada', claims_json: overGrpc.claims_json, reason: 'REASON_UNSPECIFIED' });
    expect(jwks?.response).toEqual({ jwks_json: (await grpc.getJwks()).jwks_json });
    expect(statusList?.response).toEqual({ token: listBefore });
    expect(revoked?.response).toEqual({ revoked: true, expires_at: String(toRevoke.expires_at + 5) });
    expect(await grpc.verifyJwt({ jwt: toRevoke.jwt })).toMatchObject({ valid: false, reason: 'REVOKED' });
    const refusals = await grpcRefusals(port);
    expect(badAlgorithm).toEqual(refusals.badAlgorithm);
    expect(revokeWithoutSecret).toEqual(refusals.revokeWithoutSecret);
  });
});

const curl = findOnPath('curl');
if (curl === null) console.warn('curl test skipped: curl is not on PATH');

describe.skipIf(curl === null)('curl on the same port', () => {
  /** `curl -s` with `args`: the body, and the HTTP status it printed on the last line. */
  async function curlCall(args: readonly string[]): Promise<{ status: number; body: string }> {
    const { code, stdout, stderr } = await runToExit(curl as string, ['-s', '-S', '-w', '\n%{http_code}', ...args], { timeoutMs: 10_000 });
    expect(code, stderr).toBe(0);
    const cut = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
  }

  it.each([
    ['HTTP/1.1', '--http1.1'],
    ['HTTP/2', '--http2-prior-knowledge'],
  ])('%s: a Connect POST in JSON issues a token grpc-js verifies; a refused one answers the code grpc-js gets', async (_name, flag) => {
    const port = await served;
    const url = `http://127.0.0.1:${port}/jwt.services.JwtService/GenerateJwt`;
    const json = ['-H', 'content-type: application/json', url];
    const issued = await curlCall([flag, '-d', '{"algorithm":"ES256","subject":"ada","ttlSeconds":"60"}', ...json]);
    expect(issued.status).toBe(200);
    const token = (JSON.parse(issued.body) as { jwt: string }).jwt;
    expect(await clients.jwt(port).verifyJwt({ jwt: token })).toMatchObject({ valid: true, sub: 'ada' });
    const refused = await curlCall([flag, '-d', '{"algorithm":"NONE256"}', ...json]);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toEqual({ code: 'invalid_argument', message: (await grpcRefusals(port)).badAlgorithm.message });
  });

  it.each([
    ['HTTP/1.1', '--http1.1'],
    ['HTTP/2', '--http2-prior-knowledge'],
  ])('%s: a Connect GET of GetJwks answers the JWKS grpc-js gets', async (_name, flag) => {
    const port = await served;
    const answer = await curlCall([
      flag,
      `http://127.0.0.1:${port}/jwt.services.JwtService/GetJwks?connect=v1&encoding=json&message=%7B%7D`,
    ]);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ jwksJson: (await clients.jwt(port).getJwks()).jwks_json });
  });
});
