/**
 * The benchmark's protected peer (bench/peers/protected/server.ts, built): its command-line
 * contract (listening line, SIGTERM exit 0) and its three --verify modes, against a real
 * issuer on loopback.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Metadata, type ServiceClientConstructor, type ServiceError, credentials, loadPackageDefinition, status } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, killAll, startServer } from '../../bench/kit/launcher.js';
import { type JwtServer, createJwtClient, createJwtServer, generateKeys, silentLogger } from '../../src/lib/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PEER = join(ROOT, 'dist/bench/peers/protected/server.js');
const PROTO = join(ROOT, 'bench/peers/protected/greeter.proto');

let issuer: JwtServer;
let issuerTarget: string;
let token: string;

beforeAll(async () => {
  if (!existsSync(PEER)) throw new Error('the peer runs from the build: run `npm run build` first');
  issuer = createJwtServer({ keys: await generateKeys({ algorithms: ['ES256'] }), logger: silentLogger });
  issuerTarget = `127.0.0.1:${await issuer.listen('127.0.0.1:0')}`;
  const client = createJwtClient(issuerTarget);
  token = (await client.generateJwt({ algorithm: 'ES256', subject: 'bench@example.com', audience: 'greeter' })).jwt;
  client.close();
});
afterEach(() => killAll());
afterAll(() => issuer?.close({ graceMs: 0 }));

function startPeer(verify: string): Promise<ServerProcess> {
  return startServer('protected peer', process.execPath, [
    PEER,
    '--port',
    '0',
    '--issuer',
    issuerTarget,
    '--verify',
    verify,
    '--audience',
    'greeter',
  ]);
}

function hello(port: number, authorization?: string): Promise<{ message: string }> {
  const { demo } = loadPackageDefinition(loadSync(PROTO)) as unknown as { demo: { Greeter: ServiceClientConstructor } };
  const client = new demo.Greeter(`127.0.0.1:${port}`, credentials.createInsecure());
  const metadata = new Metadata();
  if (authorization !== undefined) metadata.set('authorization', authorization);
  return new Promise<{ message: string }>((resolve, reject) => {
    (client as unknown as { Hello: (...args: unknown[]) => unknown }).Hello(
      { name: 'x' },
      metadata,
      (err: ServiceError | null, reply: { message: string }) => {
        client.close();
        if (err === null) resolve(reply);
        else reject(err);
      },
    );
  });
}

describe('bench/peers/protected', () => {
  for (const verify of ['local', 'rpc']) {
    it(`--verify ${verify}: answers a good token with its subject, refuses none, stops on SIGTERM`, async () => {
      const peer = await startPeer(verify);
      expect((await hello(peer.port, `Bearer ${token}`)).message).toBe('hello bench@example.com');
      const refused = await hello(peer.port).catch((err: ServiceError) => err);
      expect((refused as ServiceError).code).toBe(status.UNAUTHENTICATED);
      expect(await peer.stop()).toEqual({ code: 0, signal: null });
    });
  }

  it('--verify none: the same service without the interceptor', async () => {
    const { port } = await startPeer('none');
    expect((await hello(port)).message).toBe('hello ');
  });
});
