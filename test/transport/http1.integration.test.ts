/**
 * HTTP/1.1 on the own transport's gRPC port (src/transport/http1/), over real loopback
 * connections: the first bytes (or ALPN) pick node:http or the HTTP/2 wire; every bound of
 * an HTTP/2 connection has its HTTP/1.1 counterpart (docs/http2-limits.md); each attack is
 * measured beside a legitimate caller, over HTTP/1.1 and over gRPC on the same port. Bounds
 * are short so each test takes about a second.
 */
import { type IncomingHttpHeaders, Agent, request as httpRequest } from 'node:http';
import { type Socket, connect as connectTcp } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { unary } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, recordingLogger, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import type { ConnectionCounters } from '../../src/base/connection-guard.js';
import type { DeadlineCounters } from '../../src/base/peer-deadlines.js';
import { DeadlineMetrics } from '../../src/metrics/deadlines.js';
import { Registry } from 'prom-client';
import type { ServiceImplementation } from '../../src/contracts/handler-api.js';
import { classify } from '../../src/transport/http1/sniff.js';
import { HTTP1_MAX_PIPELINED_REQUESTS } from '../../src/transport/http2/defaults.js';
import type { Http2GrpcServerOptions } from '../../src/transport/http2/options.js';
import { type Http2GrpcServer, createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import { PROBE, probeClient } from './helpers/probe.js';
import { HEALTH_SERVICE, JWT_SERVICE, type LooseJwtClient, type ProtocolClientKind, envelope, frames } from './helpers/protocol-clients.js';

/** Every client kind connect-node offers: Connect and gRPC-Web, each in JSON and protobuf. */
const CLIENT_KINDS: readonly ProtocolClientKind[] = [
  { protocol: 'connect', binary: false },
  { protocol: 'connect', binary: true },
  { protocol: 'grpc-web', binary: false },
  { protocol: 'grpc-web', binary: true },
];

/** A connect-node transport over HTTP/1.1 to `port`. */
function http1Transport(port: number, kind: ProtocolClientKind) {
  const options = { baseUrl: `http://127.0.0.1:${port}`, httpVersion: '1.1' as const, useBinaryFormat: kind.binary };
  return kind.protocol === 'connect' ? createConnectTransport(options) : createGrpcWebTransport(options);
}

const execFileAsync = promisify(execFile);

const probe: ServiceImplementation = {
  Unary: (request: unknown) => ({ echo: request }),
  ServerStream: () => {},
  ClientStream: async (requests: AsyncIterable<{ n: number }>) => {
    let total = 0;
    for await (const { n } of requests) total += n;
    return { total };
  },
  Bidi: () => {},
};

/** Short bounds: each attack ends within about a second. */
const DEADLINE_MS = 300;
/** What closing may take beyond a bound: node:http checks its timeouts every second at most (Node 24 adds a second to keep-alive), and the machine is shared. */
const SLACK_MS = 2500;

/** What the server counted. */
interface Counted {
  readonly handshakeFailures: string[];
  readonly refused: string[];
  readonly evicted: string[];
  readonly closed: string[];
  requestTimeouts: number;
}

const sockets = new Set<Socket>();
const closers: (() => Promise<void>)[] = [];
const clients: { close(): void }[] = [];

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  for (const client of clients.splice(0)) client.close();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function serve(
  options: Http2GrpcServerOptions = {},
  tls?: TestCerts,
): Promise<{ port: number; counted: Counted; server: Http2GrpcServer }> {
  const counted: Counted = { handshakeFailures: [], refused: [], evicted: [], closed: [], requestTimeouts: 0 };
  const connectionCounters: ConnectionCounters = {
    handshakeFailed: (_port, reason) => counted.handshakeFailures.push(reason),
    refused: (_port, reason) => counted.refused.push(reason),
    evicted: (_port, reason) => counted.evicted.push(reason),
  };
  const deadlineCounters: DeadlineCounters = {
    requestTimedOut: () => (counted.requestTimeouts += 1),
    connectionClosed: (reason, httpVersion) => counted.closed.push(`${reason} ${httpVersion}`),
  };
  const server = createHttp2GrpcServer({
    logger: recordingLogger(),
    handshakeTimeoutMs: DEADLINE_MS,
    connectionCounters,
    deadlineCounters,
    ...options,
  });
  server.addService(PROBE, probe);
  closers.push(() => server.close({ graceMs: 0 }));
  const port = await server.listen('127.0.0.1:0', tls === undefined ? undefined : { key: tls.serverKey, cert: tls.serverCert });
  return { port, counted, server };
}

interface Answer {
  readonly socket: Socket;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly ms: number;
}

/** One HTTP/1.1 request with node:http's client; `agent` keeps its connection alive between calls. */
function http1(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<Answer> {
  const since = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: options.method ?? 'POST', headers: options.headers, agent: options.agent },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ socket: req.socket as Socket, status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - since }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A Connect unary call over HTTP/1.1 to the probe (whose codec is JSON, so `application/proto` carries JSON bytes), on a connection of its own. */
function connectUnary(port: number, request: unknown): Promise<Answer> {
  const headers = { 'content-type': 'application/proto', 'connect-protocol-version': '1', connection: 'close' };
  return http1(port, '/test.Probe/Unary', { headers, body: JSON.stringify(request) });
}

/** The legitimate callers beside an attack: a Connect call over HTTP/1.1 and a gRPC call on the same port, each within `limitMs`. */
async function legitimateCallers(port: number, limitMs = 1000): Promise<void> {
  const answer = await connectUnary(port, { hello: 'h1' });
  expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({ status: 200, body: { echo: { hello: 'h1' } } });
  expect(answer.ms).toBeLessThan(limitMs);
  const client = probeClient(port);
  clients.push(client);
  const since = performance.now();
  expect(await unary(client, 'Unary', { hello: 'h2' }, 5000)).toEqual({ echo: { hello: 'h2' } });
  expect(performance.now() - since).toBeLessThan(limitMs);
}

/** A Connect unary request to the probe as raw bytes; `pad` makes its answer (an echo) that much longer. */
function unaryRequest(pad = 0, extra = ''): string {
  const body = JSON.stringify(pad === 0 ? {} : { pad: 'a'.repeat(pad) });
  return `POST /test.Probe/Unary HTTP/1.1\r\nhost: x\r\ncontent-type: application/proto\r\nconnect-protocol-version: 1\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;
}

/**
 * Sends a Connect client stream to the probe on `socket` (served with maxReceiveMessageBytes
 * 1024), chunked: small messages its handler reads, then one that declares 5000 bytes and
 * never ends. Expects it refused resource_exhausted and the connection closed.
 */
async function clientStreamPastLimit(socket: Socket & { received: string }): Promise<void> {
  socket.write(
    'POST /test.Probe/ClientStream HTTP/1.1\r\nhost: x\r\ncontent-type: application/connect+proto\r\nconnect-protocol-version: 1\r\ntransfer-encoding: chunked\r\n\r\n',
  );
  const small = Buffer.from('{"n":1}');
  const envelope = (length: number, payload: Buffer) => {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(length, 1);
    return Buffer.concat([prefix, payload]);
  };
  const chunked = (bytes: Buffer) => `${bytes.length.toString(16)}\r\n${bytes.toString('latin1')}\r\n`;
  const head = Buffer.concat([envelope(small.length, small), envelope(small.length, small), envelope(5000, Buffer.alloc(0))]);
  socket.write(chunked(head), 'latin1');
  const chunk = chunked(Buffer.alloc(512, 'a'));
  const flood = setInterval(() => socket.writable && socket.write(chunk, 'latin1'), 1);
  try {
    await closedWithin(socket, Date.now(), SLACK_MS);
  } finally {
    clearInterval(flood);
  }
  // Refused by the exchange (413, 429) or by the protocol (200 and an end-stream error): resource_exhausted either way.
  expect(socket.received).toMatch(/^HTTP\/1\.1 (200|413|429) [\s\S]*resource_exhausted/);
}

/** A raw TCP connection from `localAddress`, read from (so its close is seen) into `received`. */
function raw(port: number, localAddress = '127.0.0.1'): Promise<Socket & { received: string }> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ port, host: '127.0.0.1', localAddress }, () => resolve(socket)) as Socket & { received: string };
    socket.received = '';
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => (socket.received += chunk.toString('latin1')));
    socket.once('error', reject);
  });
}

/** Milliseconds from `since` until `socket` closes; rejects if it is still open after `limitMs`. */
function closedWithin(socket: Socket, since: number, limitMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve(Date.now() - since);
    const timer = setTimeout(() => reject(new Error(`still open after ${Date.now() - since} ms`)), limitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - since);
    });
  });
}

describe('the first bytes pick the protocol', () => {
  it('a method and a space is HTTP/1.1; "PRI " (the HTTP/2 preface) or any other first word is not', () => {
    expect(classify(Buffer.from('POST /x HTTP/1.1\r\n'))).toBe('http/1.1');
    expect(classify(Buffer.from('OPTIONS '))).toBe('http/1.1');
    expect(classify(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'))).toBe('other');
    expect(classify(Buffer.from('INVALID CONNECTION PREFACE\r\n\r\n'))).toBe('other');
    expect(classify(Buffer.from([0x16, 0x03, 0x01]))).toBe('other');
    expect(classify(Buffer.from('GETX'))).toBe('other');
    expect(classify(Buffer.from('GE'))).toBeUndefined();
  });

  it('serves HTTP/1.1 and gRPC (HTTP/2 prior knowledge) on one port, and refuses gRPC over HTTP/1.1 with 505 naming why', async () => {
    const { port } = await serve();
    await legitimateCallers(port);
    const grpc = await http1(port, '/test.Probe/Unary', { headers: { 'content-type': 'application/grpc' }, body: '' });
    expect(grpc.status).toBe(505);
    expect(JSON.parse(grpc.body)).toMatchObject({ code: 'unimplemented', message: expect.stringContaining('gRPC needs HTTP/2') });
    const unknown = await http1(port, '/test.Probe/Nothing', {
      headers: { 'content-type': 'application/proto', 'connect-protocol-version': '1' },
      body: '{}',
    });
    expect(JSON.parse(unknown.body)).toMatchObject({ code: 'unimplemented', message: expect.stringContaining('unknown method Nothing') });
  });

  it('closes what is neither HTTP/1.1 nor HTTP/2 and counts it as a bad preface', async () => {
    const { port, counted } = await serve();
    const socket = await raw(port);
    socket.write('SSH-2.0-OpenSSH_9.6\r\n');
    await closedWithin(socket, Date.now(), SLACK_MS);
    expect(counted.handshakeFailures).toEqual(['preface']);
    await legitimateCallers(port);
  });

  it('a peer that sends 3 bytes and half-closes is closed at once, and nothing is counted', async () => {
    const { port, counted } = await serve({ handshakeTimeoutMs: 30_000 });
    const socket = await raw(port);
    socket.end('GET');
    await closedWithin(socket, Date.now(), SLACK_MS);
    expect(counted.handshakeFailures).toEqual([]);
    await legitimateCallers(port);
  });

  it('a peer that sends 3 bytes and stops meets the handshake deadline, counted as a timeout', async () => {
    const { port, counted } = await serve();
    const socket = await raw(port);
    const since = Date.now();
    socket.write('GET');
    const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
    expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(counted.handshakeFailures).toEqual(['timeout']);
  });
});

/** Whether curl is installed: the curl test is skipped, and named so, without it. */
const hasCurl = spawnSync('curl', ['--version']).status === 0;

/** curl with `args`, answering status, HTTP version and body (with the head when `-i`). */
async function curl(args: readonly string[]): Promise<{ status: number; version: string; body: string }> {
  const { stdout } = await execFileAsync('curl', ['-sS', '--max-time', '5', '-w', '\n%{http_code} %{http_version}', ...args]);
  const cut = stdout.lastIndexOf('\n');
  const [status, version] = stdout.slice(cut + 1).split(' ');
  return { status: Number(status), version: version as string, body: stdout.slice(0, cut) };
}

describe('HTTP/1.1 bounds, each beside a legitimate caller', () => {
  it('a request body not whole within requestTimeoutMs is answered 408, closed, and counted as a request timed out', async () => {
    const { port, counted } = await serve({ requestTimeoutMs: 500 });
    const socket = await raw(port);
    const since = Date.now();
    socket.write('POST /test.Probe/Unary HTTP/1.1\r\nhost: x\r\ncontent-type: application/proto\r\ncontent-length: 100\r\n\r\n{"a":');
    await legitimateCallers(port);
    const after = await closedWithin(socket, since, 500 + SLACK_MS);
    expect(after).toBeGreaterThanOrEqual(450);
    expect(socket.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(counted.requestTimeouts).toBe(1);
  });

  it('slowloris: a request head still not whole at the handshake deadline is answered 408, closed and counted', async () => {
    const { port, counted } = await serve();
    const socket = await raw(port);
    const since = Date.now();
    socket.write('POST /test.Probe/Unary HTTP/1.1\r\nhost: x\r\n');
    const dribble = setInterval(() => socket.write('x-a: b\r\n'), 100);
    try {
      await legitimateCallers(port);
      const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
      expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    } finally {
      clearInterval(dribble);
    }
    expect(socket.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(counted.handshakeFailures).toEqual(['timeout']);
  });

  it('a later head on a keep-alive connection gets the same deadline, counted as a request timed out', async () => {
    const { port, counted } = await serve();
    const socket = await raw(port);
    socket.write(unaryRequest());
    await expect.poll(() => socket.received).toMatch(/^HTTP\/1\.1 200 /);
    const since = Date.now();
    socket.write('GET /test.Probe/Nothing HTTP/1.1\r\nhost: x\r\n');
    await legitimateCallers(port);
    await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
    expect(counted.requestTimeouts).toBe(1);
    expect(counted.handshakeFailures).toEqual([]);
  });

  it('a head larger than maxHeaderListBytes is answered 431 and closed', async () => {
    const { port } = await serve({ maxHeaderListBytes: 4096 });
    const socket = await raw(port);
    socket.write(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(8192)}\r\n\r\n`);
    await closedWithin(socket, Date.now(), SLACK_MS);
    expect(socket.received).toMatch(/^HTTP\/1\.1 431 /);
    await legitimateCallers(port);
  });

  it('a body declared larger than one framed message is refused before the rest is read, and the connection closed', async () => {
    const { port } = await serve({ maxReceiveMessageBytes: 1024 });
    const socket = await raw(port);
    const head = 'POST /test.Probe/Unary HTTP/1.1\r\nhost: x\r\ncontent-type: application/proto\r\ncontent-length: 100000000\r\n\r\n';
    socket.write(`${head}${'a'.repeat(4096)}`);
    await closedWithin(socket, Date.now(), SLACK_MS);
    // Connect's own limit (maxReceiveMessageBytes: 429 resource_exhausted) or the transport's (one framed message: 413).
    expect(socket.received).toMatch(/^HTTP\/1\.1 (413|429) [\s\S]*resource_exhausted/);
    await legitimateCallers(port);
  });

  it('a client stream whose body is larger than one message is served: what counts is what the protocol holds, not the whole body', async () => {
    const { port } = await serve({ maxReceiveMessageBytes: 1024 });
    const message = envelope(Buffer.from(JSON.stringify({ n: 1, pad: 'a'.repeat(64) })));
    const body = Buffer.concat(Array.from({ length: 100 }, () => message));
    const headers = { 'content-type': 'application/connect+proto', 'connect-protocol-version': '1', connection: 'close' };
    const since = performance.now();
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/test.Probe/ClientStream', method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(body.length).toBeGreaterThan(4 * 1024);
    expect(frames(answer)[0]?.payload.toString()).toBe('{"total":100}');
    expect(performance.now() - since).toBeLessThan(1000);
  });

  it('an endless chunked body to a method not served is not read on: answered, and the connection closed', async () => {
    const { port } = await serve();
    const socket = await raw(port);
    socket.write('POST /test.Probe/Nothing HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
    const chunk = `4000\r\n${'a'.repeat(0x4000)}\r\n`;
    const flood = setInterval(() => socket.writable && socket.write(chunk), 1);
    try {
      await legitimateCallers(port);
      await closedWithin(socket, Date.now(), SLACK_MS);
    } finally {
      clearInterval(flood);
    }
    // Connect's answer to a path nothing serves: 404, read as unimplemented.
    expect(socket.received).toMatch(/^HTTP\/1\.1 404 [\s\S]*unimplemented/);
  });

  it('an endless chunked body to a method served is refused resource_exhausted past one framed message, and the connection closed', async () => {
    const { port } = await serve({ maxReceiveMessageBytes: 1024 });
    const socket = await raw(port);
    socket.write('POST /test.Probe/Unary HTTP/1.1\r\nhost: x\r\ncontent-type: application/proto\r\ntransfer-encoding: chunked\r\n\r\n');
    const chunk = `400\r\n${'a'.repeat(0x400)}\r\n`;
    const flood = setInterval(() => socket.writable && socket.write(chunk), 1);
    try {
      await legitimateCallers(port);
      await closedWithin(socket, Date.now(), SLACK_MS);
    } finally {
      clearInterval(flood);
    }
    expect(socket.received).toMatch(/^HTTP\/1\.1 (413|429) [\s\S]*resource_exhausted/);
  });

  it('a client stream with a message past the bound is refused while its handler reads, and the server serves on', async () => {
    const { port } = await serve({ maxReceiveMessageBytes: 1024 });
    await clientStreamPastLimit(await raw(port));
    await legitimateCallers(port);
  });

  it('an idle keep-alive connection is closed after maxConnectionIdleMs and counted idle, by HTTP version', async () => {
    const registry = new Registry();
    const { port } = await serve({ maxConnectionIdleMs: 1000, deadlineCounters: new DeadlineMetrics(registry) });
    const socket = await raw(port);
    socket.write(unaryRequest());
    await expect.poll(() => socket.received).toMatch(/^HTTP\/1\.1 200 [\s\S]*connection: keep-alive/i);
    const since = Date.now();
    await legitimateCallers(port);
    const after = await closedWithin(socket, since, 1000 + SLACK_MS);
    expect(after).toBeGreaterThanOrEqual(950);
    const metrics = await registry.metrics();
    expect(metrics).toContain('jwt_grpc_connections_closed_total{reason="idle",http_version="http/1.1"} 1');
    expect(metrics).toContain('jwt_grpc_connections_closed_total{reason="age",http_version="http/1.1"} 0');
  });

  it('a connection past maxConnectionAgeMs is told to close with its next answer, and counted age', async () => {
    const { port, counted } = await serve({ maxConnectionAgeMs: 1000, maxConnectionIdleMs: 10_000 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await http1(port, '/test.Probe/Nothing', { method: 'GET', agent })).headers.connection).toBe('keep-alive');
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await http1(port, '/test.Probe/Nothing', { method: 'GET', agent })).headers.connection).toBe('close');
      expect(counted.closed).toEqual(['age http/1.1']);
    } finally {
      agent.destroy();
    }
  });

  it('a peer that never reads its answers is closed at the stall bound (maxFlowControlStallMs)', async () => {
    // 12 pipelined requests (under the pipelining bound) whose 1 MB echoes are never read: more than the socket buffers hold.
    const { port } = await serve({ maxFlowControlStallMs: 500, maxReceiveMessageBytes: 1 << 20 });
    const socket = await raw(port);
    socket.pause();
    socket.write(unaryRequest(1_000_000).repeat(12));
    await legitimateCallers(port);
    const since = Date.now();
    // Twice the slack: the 12 MB of answers are made on a shared core before the writes stall.
    await closedWithin(socket, since, 500 + 2 * SLACK_MS);
  });

  it('more pipelined requests unanswered than HTTP1_MAX_PIPELINED_REQUESTS close the connection; fewer are all answered', async () => {
    const { port } = await serve();
    const few = await raw(port);
    few.write(unaryRequest().repeat(HTTP1_MAX_PIPELINED_REQUESTS));
    await expect.poll(() => few.received.split('HTTP/1.1 200').length - 1).toBe(HTTP1_MAX_PIPELINED_REQUESTS);
    const socket = await raw(port);
    socket.write(unaryRequest().repeat(64));
    await closedWithin(socket, Date.now(), SLACK_MS);
    expect(socket.received.split('HTTP/1.1 200').length - 1).toBeLessThan(64);
    await legitimateCallers(port);
  });
});

describe('Connect and gRPC-Web over HTTP/1.1, with clients written elsewhere', () => {
  const issuer = (async () =>
    (await startServer({ transport: 'http2', keys: await sharedKeys(), issuer: 'https://issuer.example' })).port)();
  afterAll(() => closeAllServers());

  it.each(CLIENT_KINDS)(
    'connect-node over HTTP/1.1 ($protocol, binary $binary) issues a token, reads the JWK Set and a health stream',
    async (kind) => {
      const port = await issuer;
      const client = createClient(JWT_SERVICE, http1Transport(port, kind)) as unknown as LooseJwtClient;
      expect((await client.generateJwt({ algorithm: 'ES256', subject: 'ada' })).sub).toBe('ada');
      expect((await client.getJwks({})).jwksJson).toContain('"keys"');
      // A server stream (health's Watch) over HTTP/1.1: its first status, then the call is cancelled.
      const health = createClient(HEALTH_SERVICE, http1Transport(port, kind)) as unknown as {
        watch(request: object, options: { signal: AbortSignal }): AsyncIterable<{ status: unknown }>;
      };
      const controller = new AbortController();
      try {
        for await (const answer of health.watch({ service: '' }, { signal: controller.signal })) {
          expect(answer.status).toBe(1);
          break;
        }
      } finally {
        controller.abort();
      }
    },
  );

  it.skipIf(!hasCurl)('curl over HTTP/1.1: a Connect POST in JSON, and GetJwks by GET with its ETag', async () => {
    const port = await issuer;
    const base = `http://127.0.0.1:${port}/jwt.services.JwtService`;
    const post = await curl([
      '--http1.1',
      '-H',
      'content-type: application/json',
      '--data',
      '{"algorithm":"ES256","subject":"curl"}',
      `${base}/GenerateJwt`,
    ]);
    expect(post.version).toBe('1.1');
    expect(post.status).toBe(200);
    expect(JSON.parse(post.body).sub).toBe('curl');
    const get = await curl(['--http1.1', '-i', `${base}/GetJwks?connect=v1&encoding=json&message=%7B%7D`]);
    expect([get.version, get.status]).toEqual(['1.1', 200]);
    expect(get.body).toMatch(/^etag: /im);
  });
});

describe('HTTP/1.1 connections share the port cap', () => {
  it('an HTTP/1.1 keep-alive connection counts against maxConnections: at the cap, the next connection takes the place of the one idle the longest', async () => {
    const { port, counted } = await serve({ maxConnections: 2, peerSharePercent: 100 });
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      await Promise.all([
        http1(port, '/test.Probe/Nothing', { method: 'GET', agent }),
        http1(port, '/test.Probe/Nothing', { method: 'GET', agent }),
      ]);
      const idle = Object.values(agent.freeSockets).flat();
      expect(idle).toHaveLength(2);
      const newcomer = await raw(port);
      await expect.poll(() => idle.filter((socket) => socket?.destroyed).length).toBe(1);
      expect(newcomer.destroyed).toBe(false);
      expect(counted.evicted).toEqual(['idle']);
      expect(counted.refused).toEqual([]);
    } finally {
      agent.destroy();
    }
  });
});

describe('HTTP/1.1 connections share the per-address share', () => {
  it('an address holding its share in HTTP/1.1 connections is refused the next one; another address is served', async () => {
    // A cap of 8: each address may hold 4 (PEER_CONNECTIONS_FLOOR).
    const { port, counted } = await serve({ maxConnections: 8, handshakeTimeoutMs: 30_000 });
    const held = await Promise.all(Array.from({ length: 4 }, () => raw(port, '127.0.0.2')));
    for (const socket of held) socket.write(unaryRequest());
    for (const socket of held) await expect.poll(() => socket.received).toMatch(/^HTTP\/1\.1 200 /);
    const refused = await raw(port, '127.0.0.2');
    await closedWithin(refused, Date.now(), SLACK_MS);
    expect(counted.refused).toEqual(['peer_share']);
    await legitimateCallers(port);
  });
});

describe('HTTP/1.1 requests share the memory ceilings', () => {
  it("past its address's share of the process's memory, a request is refused 503 at once; another address is served", async () => {
    // 1 MiB for the process, a quarter (256 KiB) per address; 127.0.0.2 holds four bodies of 80 KB half sent.
    const { port } = await serve({ maxProcessStreamMemoryMb: 1, peerSharePercent: 25, maxReceiveMessageBytes: 100_000 });
    const head = 'POST /test.Probe/Unary HTTP/1.1\r\nhost: x\r\ncontent-type: application/proto\r\ncontent-length: 90000\r\n\r\n';
    const holders = await Promise.all(Array.from({ length: 4 }, () => raw(port, '127.0.0.2')));
    for (const holder of holders) holder.write(`${head}${'a'.repeat(80_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await raw(port, '127.0.0.2');
    refused.write(unaryRequest());
    await expect.poll(() => refused.received).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"unavailable"/);
    await legitimateCallers(port);
    // Released with the requests: the address is served again.
    for (const holder of holders) holder.destroy();
    const again = await raw(port, '127.0.0.2');
    again.write(unaryRequest());
    await expect.poll(() => again.received).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('closing the server', () => {
  it('ends an idle keep-alive connection at once, and one in the middle of a request head at once too', async () => {
    const { port, server } = await serve({ handshakeTimeoutMs: 30_000 });
    const idle = await raw(port);
    idle.write(unaryRequest());
    await expect.poll(() => idle.received).toMatch(/^HTTP\/1\.1 200 /);
    const partial = await raw(port);
    partial.write('POST /test.Probe/Unary HTTP/1.1\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const since = Date.now();
    await server.close({ graceMs: 10_000 });
    expect(Date.now() - since).toBeLessThan(1000);
    await closedWithin(idle, since, 1000);
    await closedWithin(partial, since, 1000);
  });
});

describe.skipIf(!hasOpenssl())('HTTP/1.1 over TLS', () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs?.remove());

  /** A TLS connection offering `alpn` (none when empty); resolves with what the server chose, and the socket. */
  function tls(port: number, alpn: string[]): Promise<Socket & { received: string }> {
    return new Promise((resolve, reject) => {
      const options = {
        host: '127.0.0.1',
        port,
        ca: certs.caCert,
        servername: 'localhost',
        ...(alpn.length > 0 && { ALPNProtocols: alpn }),
      };
      const socket = connectTls(options, () => resolve(socket)) as ReturnType<typeof connectTls> & { received: string };
      socket.received = '';
      sockets.add(socket);
      socket.on('data', (chunk: Buffer) => (socket.received += chunk.toString('latin1')));
      socket.once('error', reject);
    });
  }

  it('ALPN http/1.1 and a client without ALPN sending a request line are served HTTP/1.1; h2 is preferred when both are offered', async () => {
    const { port } = await serve({}, certs);
    for (const alpn of [['http/1.1'], []]) {
      const socket = await tls(port, alpn);
      socket.write(unaryRequest(0, 'connection: close\r\n'));
      await closedWithin(socket, Date.now(), SLACK_MS);
      expect(socket.received).toMatch(/^HTTP\/1\.1 200 /);
    }
    const both = await tls(port, ['h2', 'http/1.1']);
    expect((both as unknown as { alpnProtocol: string }).alpnProtocol).toBe('h2');
  });

  it('a client stream with a message past the bound is refused while its handler reads, and the server serves on', async () => {
    const { port } = await serve({ maxReceiveMessageBytes: 1024 }, certs);
    await clientStreamPastLimit(await tls(port, ['http/1.1']));
    const again = await tls(port, ['http/1.1']);
    again.write(unaryRequest(0, 'connection: close\r\n'));
    await closedWithin(again, Date.now(), SLACK_MS);
    expect(again.received).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a client without ALPN that sends no request line is refused and counted tls, as HTTP/2 over TLS needs ALPN', async () => {
    const { port, counted } = await serve({}, certs);
    const socket = await tls(port, []);
    socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    await closedWithin(socket, Date.now(), SLACK_MS);
    expect(counted.handshakeFailures).toEqual(['tls']);
  });
});
