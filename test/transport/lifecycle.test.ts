/**
 * The server's life and its connections': options, listen, close with a grace period,
 * keepalive pings both ways (gRFC A8), maximum connection age (A9) and the Rapid Reset
 * guard.
 */
import { createServer as createTcpServer, connect as tcpConnect } from 'node:net';
import { connect as http2Connect, constants as http2Constants } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { GOAWAY_PING_TIMEOUT_MS } from '../../src/transport/http2/defaults.js';
import { createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import { type CallContext, type ServiceImplementation, GrpcStatus } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import { CLIENT_PREFACE, frame, grpcHeaders, h2Frame, rawCall, rawRequest, rawSession } from './helpers/raw.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const UNARY = '/test.Probe/Unary';

/** Unary: `{ sleepMs }` answers after that long; `{ wait: true }` only when its signal aborts. */
function probe(signals: AbortSignal[] = []): ServiceImplementation {
  return {
    async Unary(request: { sleepMs?: number; wait?: boolean }, call: CallContext) {
      signals.push(call.signal);
      if (request.wait) await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }));
      if (request.sleepMs !== undefined) await sleep(request.sleepMs);
      return { done: true };
    },
    ServerStream: () => {},
    ClientStream: () => ({}),
    Bidi: () => {},
  };
}

afterAll(closeAllServers);

describe('options', () => {
  it.each([
    [{ maxReceiveMessageBytes: 10 }, 'maxReceiveMessageBytes'],
    [{ maxReceiveMessageBytes: 1.5 }, 'maxReceiveMessageBytes'],
    [{ maxHeaderListBytes: -1 }, 'maxHeaderListBytes'],
    [{ keepaliveTimeMs: '1000' }, 'keepaliveTimeMs'],
    [{ keepalivePermitWithoutCalls: 'yes' }, 'keepalivePermitWithoutCalls'],
    [{ maxConnectionAgeMs: 0 }, 'maxConnectionAgeMs'],
    [{ maxConnectionIdleMs: 999 }, 'maxConnectionIdleMs'],
    [{ requestTimeoutMs: 50 }, 'requestTimeoutMs'],
    [{ maxConcurrentStreams: 0 }, 'maxConcurrentStreams'],
    [{ maxPingStrikes: -2 }, 'maxPingStrikes'],
    [{ interceptors: [{ onCallStart: 'no' }] }, 'interceptors'],
    [{ interceptors: [{ onServe: 'no' }] }, 'interceptors'],
    [{ logger: {} }, 'logger'],
  ])('refuses %j naming the option', (options, name) => {
    let error: unknown;
    try {
      createHttp2GrpcServer(options as never);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(JwtGrpcError);
    expect(error).toMatchObject({ code: 'ERR_INVALID_OPTION', field: name });
    expect((error as Error).message).toMatch(new RegExp(`^option ${name}: `));
  });

  it('refuses a service whose implementation lacks a method, naming it', () => {
    const server = createHttp2GrpcServer();
    expect(() => server.addService(PROBE, { Unary: () => ({}) })).toThrow(
      /no handler for \/test\.Probe\/ServerStream \(implementation\.ServerStream\)/,
    );
    server.addService(PROBE, probe());
    expect(() => server.addService(PROBE, probe())).toThrow(/\/test\.Probe\/Unary is already served/);
  });
});

describe('listen and close', () => {
  it('refuses a port in use, a bad address and a second listen', async () => {
    const { server, port } = await startHttp2([[PROBE, probe()]]);
    await expect(server.listen('127.0.0.1:0')).rejects.toMatchObject({ code: 'ERR_SERVER_STATE' });
    await expect(createHttp2GrpcServer().listen(`127.0.0.1:${port}`)).rejects.toMatchObject({ code: 'ERR_LISTEN' });
    await expect(createHttp2GrpcServer().listen('localhost')).rejects.toMatchObject({ code: 'ERR_LISTEN', field: 'address' });
    await expect(server.close({ graceMs: -1 })).rejects.toMatchObject({ code: 'ERR_INVALID_OPTION', field: 'graceMs' });
  });

  it('listens on IPv6 loopback', async (context) => {
    const server = createHttp2GrpcServer({ logger: recordingLogger() });
    server.addService(PROBE, probe());
    try {
      const port = await server.listen('[::1]:0').catch(() => undefined);
      if (port === undefined) {
        context.skip();
        return;
      }
      const session = http2Connect(`http://[::1]:${port}`);
      try {
        expect((await rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).status).toBe(GrpcStatus.OK);
      } finally {
        session.destroy();
      }
    } finally {
      await server.close();
    }
  });

  it('close: GOAWAY to every connection, calls in flight finish, new connections refused, idempotent', async () => {
    const { server, port } = await startHttp2([[PROBE, probe()]]);
    const session = await rawSession(port);
    const goaways: number[] = [];
    session.on('goaway', (code, lastStreamId) => goaways.push(code, lastStreamId));
    session.on('error', () => {});
    const inFlight = rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({ sleepMs: 300 }))] });
    await sleep(50);
    const closing = server.close({ graceMs: 5000 });
    expect(server.close()).toBe(closing);
    const started = Date.now();
    // Refused at once, while the call in flight still runs: not accepted and sent away.
    await expect(rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).rejects.toThrow(/ECONNREFUSED/);
    expect(await inFlight).toMatchObject({ status: GrpcStatus.OK });
    await closing;
    expect(Date.now() - started).toBeLessThan(4000);
    // The first GOAWAY names the largest stream id (nothing refused), the second the last one accepted.
    expect(goaways.slice(0, 2)).toEqual([http2Constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1]);
    expect(goaways[3]).toBe(1);
    await expect(rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).rejects.toThrow(/ECONNREFUSED/);
    await expect(server.listen('127.0.0.1:0')).rejects.toMatchObject({ code: 'ERR_SERVER_STATE' });
  });

  it('close of a connection without calls does not wait out the GOAWAY PING timeout', async () => {
    const { server, port } = await startHttp2([[PROBE, probe()]]);
    const session = await rawSession(port);
    session.on('error', () => {});
    const goaways: number[] = [];
    session.on('goaway', (code, lastStreamId) => goaways.push(code, lastStreamId));
    const sessionClosed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    // One call first: an idle connection that has served calls, as a client's usually is.
    expect(await rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).toMatchObject({ status: GrpcStatus.OK });
    const started = performance.now();
    await server.close({ graceMs: 5000 });
    const closeMs = performance.now() - started;
    await sessionClosed;
    // nghttp2 reads nothing more from an idle connection once GOAWAY is sent, so the PING's
    // ack never comes: waiting for it cost every close GOAWAY_PING_TIMEOUT_MS.
    expect(closeMs).toBeLessThan(GOAWAY_PING_TIMEOUT_MS / 2);
    expect(goaways.slice(0, 2)).toEqual([http2Constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1]);
  });

  it('close sends the second GOAWAY when the last call ends, not after the PING timeout, when the ack is late', async () => {
    const { server, port } = await startHttp2([[PROBE, probe()]]);
    // A proxy that can hold what the server sends: its PING reaches the client (and the ack
    // comes back) only once released, as on a slow path. The last call ends before that.
    const held: Buffer[] = [];
    let holding = false;
    const proxy = createTcpServer((client) => {
      const upstream = tcpConnect(port, '127.0.0.1');
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => (holding ? held.push(chunk) : client.write(chunk)));
      upstream.on('close', () => client.destroy());
      for (const socket of [client, upstream]) socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const session = await rawSession((proxy.address() as { port: number }).port);
      session.on('error', () => {});
      const inFlight = rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({ sleepMs: 200 }))] }).catch(() => undefined);
      await sleep(50);
      holding = true;
      const started = performance.now();
      await server.close({ graceMs: 5000 });
      const closeMs = performance.now() - started;
      // Once the call's stream closed, nghttp2 read nothing more: the ack could never arrive.
      expect(closeMs).toBeGreaterThanOrEqual(100);
      expect(closeMs).toBeLessThan(GOAWAY_PING_TIMEOUT_MS * 0.75);
      holding = false;
      session.destroy();
      await inFlight;
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('close cancels the calls still running after graceMs (RST_STREAM CANCEL, signal aborted)', async () => {
    const signals: AbortSignal[] = [];
    const { server, port } = await startHttp2([[PROBE, probe(signals)]]);
    const session = await rawSession(port);
    session.on('error', () => {});
    const stream = session.request(grpcHeaders(UNARY));
    stream.on('error', () => {});
    stream.on('response', () => {});
    stream.end(frame(json({ wait: true })));
    const closed = new Promise<number | undefined>((resolve) => stream.on('close', () => resolve(stream.rstCode)));
    await sleep(50);
    const started = Date.now();
    await server.close({ graceMs: 100 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await closed).toBe(http2Constants.NGHTTP2_CANCEL);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('Symbol.asyncDispose closes the server', async () => {
    let port: number;
    {
      await using server = createHttp2GrpcServer({ logger: recordingLogger() });
      server.addService(PROBE, probe());
      port = await server.listen('127.0.0.1:0');
      expect((await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).status).toBe(GrpcStatus.OK);
    }
    await expect(rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).rejects.toThrow(/ECONNREFUSED/);
  });
});

/**
 * A bare HTTP/2 client over TCP that acknowledges SETTINGS but never PINGs: what a dead or
 * stuck peer looks like to the server's keepalive.
 */
function silentPeer(port: number): Promise<{ pings: number; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let pings = 0;
    let buffered = Buffer.alloc(0);
    const socket = tcpConnect(port, '127.0.0.1', () => {
      socket.write(CLIENT_PREFACE);
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) break;
        const type = buffered[3];
        const flags = buffered[4] ?? 0;
        if (type === 4 && (flags & 1) === 0) socket.write(h2Frame(4, 1, 0)); // SETTINGS ACK
        if (type === 6 && (flags & 1) === 0) pings++; // PING, left unanswered
        buffered = buffered.subarray(9 + length);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ pings, closedAfterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error('the server kept a silent connection open'));
    }, 5000).unref();
  });
}

describe('keepalive', () => {
  it('pings each connection every keepaliveTimeMs; an answering client stays connected', async () => {
    const { port } = await startHttp2([[PROBE, probe()]], { keepaliveTimeMs: 100 });
    const session = await rawSession(port);
    let pings = 0;
    session.on('ping', () => pings++);
    await sleep(550);
    expect(pings).toBeGreaterThanOrEqual(2);
    expect((await rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).status).toBe(GrpcStatus.OK);
    session.close();
  });

  it('closes a connection whose ping goes unanswered for keepaliveTimeoutMs', async () => {
    const { port } = await startHttp2([[PROBE, probe()]], { keepaliveTimeMs: 100, keepaliveTimeoutMs: 200 });
    const { pings, closedAfterMs } = await silentPeer(port);
    expect(pings).toBe(1);
    expect(closedAfterMs).toBeGreaterThanOrEqual(250);
  });

  it('tolerates client pings at the permitted interval, and calls forgive earlier ones', async () => {
    const { port } = await startHttp2([[PROBE, probe()]], { keepalivePermitTimeMs: 100, keepalivePermitWithoutCalls: true });
    const session = await rawSession(port);
    let goaway = false;
    session.on('goaway', () => (goaway = true));
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => session.ping(resolve));
      await sleep(150);
    }
    // Early pings, each followed by a call: the responses reset the strikes.
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => session.ping(resolve));
      expect((await rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).status).toBe(GrpcStatus.OK);
    }
    expect(goaway).toBe(false);
    session.close();
  });

  it('closes a connection that pings too often: GOAWAY ENHANCE_YOUR_CALM "too_many_pings"', async () => {
    const logger = recordingLogger();
    const { port } = await startHttp2([[PROBE, probe()]], { logger });
    const session = await rawSession(port);
    session.on('error', () => {});
    const goaway = new Promise<[number, string]>((resolve) =>
      session.on('goaway', (code, _last, data) => resolve([code, data?.toString() ?? ''])),
    );
    // No call in flight: more than one ping per 2 hours is early; the 4th exceeds 2 strikes.
    for (let i = 0; i < 4; i++) session.ping(() => {});
    expect(await goaway).toEqual([http2Constants.NGHTTP2_ENHANCE_YOUR_CALM, 'too_many_pings']);
    await new Promise((resolve) => (session.destroyed ? resolve(undefined) : session.once('close', resolve)));
    expect(logger.lines.some((line) => line.message.includes('pings too often'))).toBe(true);
  });
});

describe('maxConnectionAgeMs', () => {
  it('sends GOAWAY "max_age" after the age (±10 %), lets calls finish, cancels them after the grace', async () => {
    const signals: AbortSignal[] = [];
    const { port } = await startHttp2([[PROBE, probe(signals)]], { maxConnectionAgeMs: 1000, maxConnectionAgeGraceMs: 600 });
    const session = await rawSession(port);
    const connectedAt = Date.now();
    session.on('error', () => {});
    const goaways: { atMs: number; last: number; data: string }[] = [];
    session.on('goaway', (_code, last, data) => goaways.push({ atMs: Date.now() - connectedAt, last, data: data?.toString() ?? '' }));
    const short = rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({ sleepMs: 1200 }))] });
    const long = rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({ wait: true }))] }).catch((err: Error) => err);
    expect((await short).status).toBe(GrpcStatus.OK);
    await long;
    expect(goaways[0]).toMatchObject({ last: 2 ** 31 - 1, data: 'max_age' });
    expect(goaways[0]?.atMs).toBeGreaterThanOrEqual(880);
    expect(goaways[1]?.last).toBe(3);
    expect(signals[1]?.aborted).toBe(true);
    await new Promise((resolve) => (session.destroyed ? resolve(undefined) : session.once('close', resolve)));
  });
});

describe('Rapid Reset guard', () => {
  it('keeps a connection that resets 3,000 streams (calls cancelled) serving', async () => {
    const { port } = await startHttp2([[PROBE, probe()]]);
    const session = await rawSession(port);
    let goaway = false;
    session.on('goaway', () => (goaway = true));
    session.on('error', () => {});
    for (let i = 0; i < 3000; i++) {
      const stream = session.request(grpcHeaders(UNARY, { 'grpc-timeout': '1S' }));
      stream.on('error', () => {});
      stream.write(frame(json({ wait: true })));
      stream.close(http2Constants.NGHTTP2_CANCEL);
      if (i % 500 === 499) await sleep(10);
    }
    expect((await rawRequest(session, { headers: grpcHeaders(UNARY), chunks: [frame(json({}))] })).status).toBe(GrpcStatus.OK);
    expect(goaway).toBe(false);
    session.close();
  });
});
