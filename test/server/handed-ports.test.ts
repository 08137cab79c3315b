/**
 * A cluster worker's server (createWorkerJwtServer), whose ports the primary holds: it
 * binds nothing and serves the connections handed to it as it serves its own, on each
 * transport: gRPC calls, the discovery port with node:http's head deadline (which node:http
 * arms only once told it listens). A stand-in primary here accepts
 * on a port of its own and hands each connection over, as src/cluster/dispatcher.ts does.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HandedPort } from '../../src/base/handed-port.js';
import { type JwtServer, createWorkerJwtServer } from '../../src/server/create.js';
import { createJwtClient, silentLogger } from '../../src/lib/index.js';
import { sharedKeys } from '../../bench/kit/jwt-servers.js';

const HANDSHAKE_MS = 400;
const opened: { servers: JwtServer[]; primaries: Server[] } = { servers: [], primaries: [] };
afterEach(async () => {
  await Promise.all(opened.servers.splice(0).map((server) => server.close({ graceMs: 0 })));
  await Promise.all(opened.primaries.splice(0).map((primary) => new Promise((resolve) => primary.close(resolve))));
});

/**
 * A stand-in primary: a port of its own whose connections go to what `receive` was given.
 * Not paused: a worker's copy of a connection arrives as a new socket, not paused either.
 */
async function primaryPort(): Promise<HandedPort & { readonly bound: number }> {
  let accept: ((socket: Socket) => void) | undefined;
  const server = createServer((socket) => (accept === undefined ? socket.destroy() : accept(socket)));
  opened.primaries.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  return { port: bound, bound, receive: (next) => (accept = next) };
}

async function workerServer(
  transport: 'http2' | 'grpc-js',
  withDiscovery = false,
): Promise<{ server: JwtServer; grpc: number; http?: number }> {
  const grpc = await primaryPort();
  const discovery = withDiscovery ? await primaryPort() : undefined;
  const server = createWorkerJwtServer(
    {
      transport,
      keys: await sharedKeys(),
      logger: silentLogger,
      handshakeTimeoutMs: HANDSHAKE_MS,
      ...(discovery !== undefined && { issuer: 'https://issuer.example', httpPort: discovery.port }),
    },
    { grpc, discovery },
  );
  opened.servers.push(server);
  // Any address: nothing is bound; the port is the primary's.
  expect(await server.listen('127.0.0.1:1')).toBe(grpc.bound);
  if (discovery !== undefined) expect(server.httpPort).toBe(discovery.bound);
  return { server, grpc: grpc.bound, ...(discovery !== undefined && { http: discovery.bound }) };
}

/** What a raw HTTP/1.1 client gets back on `port` after sending `head`, and how long it took. */
function rawHttp(port: number, head: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve) => {
    const since = performance.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ text, ms: performance.now() - since }));
  });
}

describe.each(['http2', 'grpc-js'] as const)('a worker server on handed ports, transport %s', (transport) => {
  it('binds nothing and serves gRPC calls on the connections handed to it', async () => {
    const { grpc } = await workerServer(transport);
    const client = createJwtClient(`127.0.0.1:${grpc}`, { deadlineMs: 5000 });
    try {
      const token = await client.generateJwt({ algorithm: 'HS256', subject: 'handed' });
      expect(await client.verifyJwt({ jwt: token.jwt })).toMatchObject({ valid: true, sub: 'handed' });
    } finally {
      client.close();
    }
  });

  it("serves discovery on its handed port, and answers a head slower than the deadline 408 (node:http's deadline is armed)", async () => {
    const { http } = await workerServer(transport, true);
    const ok = await rawHttp(http as number, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(ok.text).toMatch(/^HTTP\/1\.1 200/);
    const slow = await rawHttp(http as number, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    expect(slow.text).toMatch(/^HTTP\/1\.1 408/);
    expect(slow.ms).toBeLessThan(HANDSHAKE_MS + 2000);
  });
});
