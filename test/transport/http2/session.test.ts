/**
 * SessionState, the gRPC session over one HTTP/2 connection: keepalive pings and their
 * deadline, ping strikes (gRFC A8) ending a flooding client with ENHANCE_YOUR_CALM, the
 * two-step graceful GOAWAY, and the stream and close events it forwards. In process: a
 * node:net server gives each socket a SessionState; the client writes frames by hand. Calls
 * on a session (cancel on close, the GOAWAY waiting for them) are covered over the whole
 * server by test/transport/lifecycle.test.ts and test/transport/http2/server.test.ts.
 */
import { type Server, createServer } from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { ConnectionGuard } from '../../../src/base/connection-guard.js';
import { PeerDeadlineReport } from '../../../src/base/peer-deadlines.js';
import { type Http2GrpcServerOptions, resolveHttp2Options } from '../../../src/transport/http2/options.js';
import { SessionState, type StreamHandler } from '../../../src/transport/http2/session.js';
import { FRAME_FLAG, FRAME_TYPE, FrameConnection, type ServerFrame, h2Frame, requestBlock } from '../helpers/raw.js';
import { waitUntil } from '../../../bench/kit/wait.js';

const LIMITS = { maxConcurrentStreams: 100, maxHeaderListBytes: 16_384, maxHeldBytes: 1 << 20, resetBurst: 100, resetRate: 100 };
const servers: Server[] = [];
const clients: FrameConnection[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

interface Opened {
  conn: FrameConnection;
  state: SessionState;
  onStream: ReturnType<typeof vi.fn<StreamHandler>>;
  onClosed: ReturnType<typeof vi.fn>;
  warn: ReturnType<typeof vi.fn>;
  failed: ReturnType<typeof vi.fn>;
}

async function open(options: Http2GrpcServerOptions = {}): Promise<Opened> {
  const warn = vi.fn();
  const resolved = resolveHttp2Options({ logger: { info() {}, warn, error() {} }, ...options });
  const onStream = vi.fn<StreamHandler>();
  const onClosed = vi.fn();
  const failed = vi.fn();
  const guard = { remainingMs: () => 10_000, failed, busy: () => {}, idle: () => {} } as unknown as ConnectionGuard;
  let state: SessionState | undefined;
  const server = createServer((socket) => {
    state = new SessionState(
      socket,
      LIMITS,
      resolved,
      onStream,
      onClosed,
      guard,
      new PeerDeadlineReport(resolved.logger, undefined, resolved),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const conn = await FrameConnection.open((server.address() as { port: number }).port);
  clients.push(conn);
  await conn.waitFor((f) => f.type === FRAME_TYPE.SETTINGS);
  expect(await waitUntil(() => state !== undefined, 2000)).toBe(true);
  return { conn, state: state as SessionState, onStream, onClosed, warn, failed };
}

const ping = (n: number): Buffer => h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.alloc(8, n));
const isGoaway = (f: ServerFrame): boolean => f.type === FRAME_TYPE.GOAWAY;
const goaway = (f: ServerFrame) => ({
  lastStreamId: f.payload.readUInt32BE(0) & 0x7fffffff,
  code: f.payload.readUInt32BE(4),
  debug: f.payload.subarray(8).toString(),
});
const acks = (conn: FrameConnection): number =>
  conn.frames.filter((f) => f.type === FRAME_TYPE.PING && (f.flags & FRAME_FLAG.ACK) !== 0).length;

describe('SessionState', () => {
  it('names its peer by address and port, and has no caller without TLS', async () => {
    const { state } = await open();
    expect(state.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(state.caller).toBeUndefined();
  });

  it('hands each new stream to the handler with its headers and itself', async () => {
    const { conn, state, onStream } = await open();
    conn.send(h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock('/demo.Greeter/Hello')));
    await vi.waitFor(() => expect(onStream).toHaveBeenCalledTimes(1));
    const [, headers, , session] = onStream.mock.calls[0] as Parameters<StreamHandler>;
    expect(headers).toMatchObject({ ':method': 'POST', ':path': '/demo.Greeter/Hello', te: 'trailers' });
    expect(session).toBe(state);
  });

  it('tells its owner once when the client goes', async () => {
    const { conn, state, onClosed } = await open();
    conn.close();
    await vi.waitFor(() => expect(onClosed).toHaveBeenCalledWith(state));
    expect(onClosed).toHaveBeenCalledTimes(1);
  });

  it('sends a keepalive PING, and closes a connection that does not answer it in keepaliveTimeoutMs', async () => {
    const { conn, onClosed } = await open({ keepaliveTimeMs: 50, keepaliveTimeoutMs: 100 });
    await conn.waitFor((f) => f.type === FRAME_TYPE.PING && (f.flags & FRAME_FLAG.ACK) === 0, 2000);
    await vi.waitFor(() => expect(onClosed).toHaveBeenCalledTimes(1), { timeout: 2000 });
    await conn.closed;
  });

  it('ends a client that pings more than maxPingStrikes times within the permit time with ENHANCE_YOUR_CALM', async () => {
    const { conn, warn } = await open({ maxPingStrikes: 1, keepalivePermitTimeMs: 60_000 });
    conn.send(ping(1), ping(2));
    expect(await waitUntil(() => acks(conn) === 2, 2000)).toBe(true);
    expect(conn.frames.some(isGoaway)).toBe(false);
    conn.send(ping(3));
    expect(goaway(await conn.waitFor(isGoaway))).toMatchObject({ code: 11, debug: 'too_many_pings' });
    expect(warn).toHaveBeenCalledWith('closing a connection that pings too often', expect.objectContaining({ strikes: 2 }));
  });

  it('counts no strikes when maxPingStrikes is 0', async () => {
    const { conn } = await open({ maxPingStrikes: 0, keepalivePermitTimeMs: 60_000 });
    conn.send(...Array.from({ length: 10 }, (_, i) => ping(i)));
    expect(await waitUntil(() => acks(conn) === 10, 2000)).toBe(true);
    expect(conn.frames.some(isGoaway)).toBe(false);
  });

  it('closes gracefully: a GOAWAY naming no last stream yet, then the final one; one promise for every caller', async () => {
    const { conn, state } = await open();
    const closing = state.gracefulClose('max_age');
    expect(state.gracefulClose('other')).toBe(closing);
    await closing;
    const first = goaway(await conn.waitFor(isGoaway));
    expect(first).toEqual({ lastStreamId: 2 ** 31 - 1, code: 0, debug: 'max_age' });
    expect(await waitUntil(() => conn.frames.filter(isGoaway).length === 2, 2000)).toBe(true);
    expect(goaway(conn.frames.filter(isGoaway)[1] as ServerFrame)).toMatchObject({ lastStreamId: 0, code: 0 });
  });

  it('forceClose ends the connection at once, and only once', async () => {
    const { conn, state, onClosed } = await open();
    state.forceClose('test');
    state.forceClose('again');
    await conn.closed;
    await vi.waitFor(() => expect(onClosed).toHaveBeenCalledTimes(1));
  });
});
