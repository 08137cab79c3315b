/**
 * Revocation reaches every service a token is shown to, with the issuer embedded in the
 * user's own grpc-js server: addJwtService with a revocations file and a Token Status List,
 * jwksHandler serving discovery, the JWK Set and the lists on the user's node:http server,
 * a protected service in a process of its own that knows the issuer by its URL alone, and
 * a caller whose call credentials drop a refused token. A token revoked at the issuer is
 * refused by the service within the list's ttl (the documented bound), and the caller's
 * next call passes with a fresh token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type Server as HttpServer, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server, ServerCredentials, credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { type ServerProcess, startServer } from '../../bench/kit/launcher.js';
import { waitUntil } from '../../bench/kit/wait.js';
import {
  type JwtServiceHandle,
  addJwtService,
  createJwtClient,
  generateKeys,
  jwksHandler,
  jwtCallCredentials,
  silentLogger,
} from '../../src/lib/index.js';
import { GREETER_PROTO, cleanup, clientTls, greeterClient } from '../client/harness.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/protected-greeter.mjs', import.meta.url));
/** The lists' ttl: how late the service may learn of a revocation (docs/status-list.md). */
const TTL_SECONDS = 1;

let certs: TestCerts;
let dir: string;
let http: HttpServer;
let issuerGrpc: Server;
let jwt: JwtServiceHandle;
let issuerTarget: string;
let greeter: ServerProcess;

beforeAll(async () => {
  if (!hasOpenssl()) throw new Error('this test needs the openssl command on PATH');
  certs = makeTestCerts();
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-embedded-'));
  // The user's HTTP server first: the issuer URL names its port.
  let documents: ReturnType<typeof jwksHandler> | undefined;
  http = createServer((req, res) => void (documents?.(req, res) || res.writeHead(404).end()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  issuerGrpc = new Server();
  jwt = addJwtService(issuerGrpc, {
    keys: await generateKeys({ algorithms: ['ES256'] }),
    issuer,
    revocations: join(dir, 'revocations.jsonl'),
    statusList: true,
    statusListTtlSeconds: TTL_SECONDS,
    logger: silentLogger,
  });
  await jwt.ready;
  documents = jwksHandler(jwt, { issuer });
  const port = await new Promise<number>((resolve, reject) =>
    issuerGrpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  issuerTarget = `127.0.0.1:${port}`;
  greeter = await startServer(
    'protected greeter',
    process.execPath,
    [FIXTURE, issuer, certs.files.serverCert, certs.files.serverKey, GREETER_PROTO],
    {
      timeoutMs: 15_000,
    },
  );
}, 30_000);

afterAll(async () => {
  await cleanup();
  await greeter?.stop();
  issuerGrpc?.forceShutdown();
  await jwt?.close();
  http?.closeAllConnections();
  http?.close();
  certs?.remove();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('an issuer embedded with addJwtService, a protected service in another process, a caller', () => {
  it('a revoked token is refused within the ttl, and the next call passes with a fresh token', async () => {
    const issuerClient = createJwtClient(issuerTarget, { credentials: credentials.createInsecure() });
    const auth = jwtCallCredentials(issuerClient, { algorithm: 'ES256', subject: 'ada', audience: 'greeter', logger: silentLogger });
    const caller = greeterClient(`127.0.0.1:${greeter.port}`, credentials.combineChannelCredentials(clientTls(certs), auth), [
      auth.interceptor,
    ]);
    try {
      // The token the caller's credentials hold, as the service saw it: revoke its status list entry.
      const first = await caller.hello();
      const index = jwt.statusList?.indexOf(JSON.parse(first.claims_json) as Record<string, unknown>);
      expect(index).toEqual(expect.any(Number));
      const revokedAt = Date.now();
      jwt.statusList?.revoke(index as number);

      // The service learns of it from the list within its ttl: calls pass until then, then one is refused.
      let refused: { code: number; details: string } | undefined;
      await waitUntil(
        async () => {
          refused = await caller.hello().then(
            () => undefined,
            (err: { code: number; details: string }) => err,
          );
          return refused !== undefined;
        },
        (TTL_SECONDS + 3) * 1000,
        100,
      );
      const learnedMs = Date.now() - revokedAt;
      expect(refused).toMatchObject({ code: status.UNAUTHENTICATED, details: expect.stringMatching(/REVOKED/) });
      expect(learnedMs).toBeLessThan((TTL_SECONDS + 3) * 1000);

      // The credentials dropped the refused token: the next call carries a fresh one, and passes.
      const next = await caller.hello();
      expect(next.message).toBe('hello ada');
      expect(jwt.statusList?.indexOf(JSON.parse(next.claims_json) as Record<string, unknown>)).not.toBe(index);
    } finally {
      issuerClient.close();
    }
  }, 20_000);
});
