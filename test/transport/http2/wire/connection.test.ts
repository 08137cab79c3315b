/**
 * H2Connection, the wire layer alone on a node:net server, with a client that writes frames
 * by hand: what it announces at the handshake, PING both ways, the events it raises, the
 * refusals of a bad preface, a silent peer and a stream past the concurrency limit, and
 * GOAWAY. The rest is covered end to end: every frame-level limit and flood guard by
 * test/transport/wire-limits.test.ts and stream-reset-budget.load.test.ts, RFC 9113
 * conformance by h2spec.integration.test.ts, flow control and memory by zero-window and
 * refused-stream-memory, interop by interop.integration.test.ts and wire.test.ts.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { CONNECTION_WINDOW, type ConnectionEvents, H2Connection, STREAM_WINDOW } from '../../../../src/transport/http2/wire/connection.js';
import { H2_ERROR, SETTING } from '../../../../src/transport/http2/wire/frames.js';
import type { H2Stream } from '../../../../src/transport/http2/wire/stream.js';
import { FRAME_FLAG, FRAME_TYPE, FrameConnection, type ServerFrame, h2Frame, requestBlock } from '../../helpers/raw.js';

const LIMITS = { maxConcurrentStreams: 2, maxHeaderListBytes: 16_384, maxHeldBytes: 1 << 20, resetBurst: 100, resetRate: 100 };
const servers: Server[] = [];
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

type Events = { [K in keyof Required<ConnectionEvents>]: ReturnType<typeof vi.fn> };

async function serve(handshakeTimeoutMs?: number): Promise<{ port: number; events: Events; connections: H2Connection[] }> {
  const events: Events = {
    stream: vi.fn(),
    ping: vi.fn(),
    goaway: vi.fn(),
    closed: vi.fn(),
    internalError: vi.fn(),
    handshakeFailed: vi.fn(),
  };
  const connections: H2Connection[] = [];
  const server = createServer((socket) => {
    connections.push(new H2Connection(socket, LIMITS, events as unknown as ConnectionEvents, handshakeTimeoutMs));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, events, connections };
}

async function client(port: number): Promise<FrameConnection> {
  const conn = await FrameConnection.open(port);
  closers.push(() => conn.close());
  await conn.waitFor((f) => f.type === FRAME_TYPE.SETTINGS && f.flags === 0);
  return conn;
}

function settingsOf(f: ServerFrame): Map<number, number> {
  const out = new Map<number, number>();
  for (let i = 0; i < f.payload.length; i += 6) out.set(f.payload.readUInt16BE(i), f.payload.readUInt32BE(i + 2));
  return out;
}
const goawayOf = (f: ServerFrame) => ({
  lastStreamId: f.payload.readUInt32BE(0),
  code: f.payload.readUInt32BE(4),
  debug: f.payload.subarray(8).toString(),
});
const isGoaway = (f: ServerFrame): boolean => f.type === FRAME_TYPE.GOAWAY;
const headers = (id: number): Buffer => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, id, requestBlock('/demo.Greeter/Hello'));

describe('H2Connection', () => {
  it('announces its limits, no push, and a connection window raised to CONNECTION_WINDOW, and acknowledges the client SETTINGS', async () => {
    const { port } = await serve();
    const conn = await client(port);
    const settings = settingsOf(await conn.waitFor((f) => f.type === FRAME_TYPE.SETTINGS && f.flags === 0));
    expect(Object.fromEntries(settings)).toEqual({
      [SETTING.ENABLE_PUSH]: 0,
      [SETTING.MAX_CONCURRENT_STREAMS]: 2,
      [SETTING.INITIAL_WINDOW_SIZE]: STREAM_WINDOW,
      [SETTING.MAX_HEADER_LIST_SIZE]: 16_384,
    });
    const update = await conn.waitFor((f) => f.type === FRAME_TYPE.WINDOW_UPDATE && f.streamId === 0);
    expect(update.payload.readUInt32BE(0)).toBe(CONNECTION_WINDOW - 65_535);
    await conn.waitFor((f) => f.type === FRAME_TYPE.SETTINGS && f.flags === FRAME_FLAG.ACK);
  });

  it("answers a client's PING with its payload and tells the owner", async () => {
    const { port, events } = await serve();
    const conn = await client(port);
    conn.send(h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.from('12345678')));
    const ack = await conn.waitFor((f) => f.type === FRAME_TYPE.PING && f.flags === FRAME_FLAG.ACK);
    expect(ack.payload.toString()).toBe('12345678');
    expect(events.ping).toHaveBeenCalledTimes(1);
  });

  it("calls back when the client acknowledges the owner's PING", async () => {
    const { port, connections } = await serve();
    const conn = await client(port);
    const acked = vi.fn();
    expect(connections[0]?.ping(acked)).toBe(true);
    const sent = await conn.waitFor((f) => f.type === FRAME_TYPE.PING && f.flags === 0);
    expect(acked).not.toHaveBeenCalled();
    conn.send(h2Frame(FRAME_TYPE.PING, FRAME_FLAG.ACK, 0, sent.payload));
    await vi.waitFor(() => expect(acked).toHaveBeenCalledWith(null));
  });

  it('raises a stream with its decoded headers, and sends what the stream responds', async () => {
    const { port, events } = await serve();
    const conn = await client(port);
    conn.send(headers(1));
    await vi.waitFor(() => expect(events.stream).toHaveBeenCalledTimes(1));
    const [stream, fields] = events.stream.mock.calls[0] as [H2Stream, Record<string, string>];
    expect(fields).toMatchObject({ ':method': 'POST', ':scheme': 'http', ':path': '/demo.Greeter/Hello', ':authority': 'localhost' });
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' }, true);
    const answer = await conn.waitFor((f) => f.type === FRAME_TYPE.HEADERS && f.streamId === 1);
    expect(answer.flags & (FRAME_FLAG.END_STREAM | FRAME_FLAG.END_HEADERS)).toBe(FRAME_FLAG.END_STREAM | FRAME_FLAG.END_HEADERS);
  });

  it('refuses a malformed field whether it comes as a literal or as an index into the dynamic table', async () => {
    const { port, events } = await serve();
    const conn = await client(port);
    // Literal with incremental indexing (RFC 7541 §6.2.1), new name: it enters the table as index 62.
    const entered = Buffer.concat([Buffer.from([0x40, 5]), Buffer.from('x-bad'), Buffer.from([3]), Buffer.from('a\rb')]);
    const indexed = Buffer.from([0x80 | 62]);
    const request = (id: number, extra: Buffer): Buffer =>
      h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, id, Buffer.concat([requestBlock('/demo.Greeter/Hello'), extra]));
    conn.send(request(1, entered), request(3, indexed), headers(5));
    await conn.waitFor((f) => f.type === FRAME_TYPE.RST_STREAM && f.streamId === 3);
    const resets = conn.frames.filter((f) => f.type === FRAME_TYPE.RST_STREAM);
    expect(resets.map((f) => [f.streamId, f.payload.readUInt32BE(0)])).toEqual([
      [1, H2_ERROR.PROTOCOL_ERROR],
      [3, H2_ERROR.PROTOCOL_ERROR],
    ]);
    await vi.waitFor(() => expect(events.stream).toHaveBeenCalledTimes(1));
    expect((events.stream.mock.calls[0] as [H2Stream])[0].id).toBe(5);
  });

  it('refuses a stream past maxConcurrentStreams with REFUSED_STREAM, raising no event for it', async () => {
    const { port, events } = await serve();
    const conn = await client(port);
    conn.send(headers(1), headers(3), headers(5));
    const reset = await conn.waitFor((f) => f.type === FRAME_TYPE.RST_STREAM);
    expect([reset.streamId, reset.payload.readUInt32BE(0)]).toEqual([5, H2_ERROR.REFUSED_STREAM]);
    expect(events.stream).toHaveBeenCalledTimes(2);
  });

  it("tells the owner of the client's GOAWAY and of the connection's end", async () => {
    const { port, events } = await serve();
    const conn = await client(port);
    conn.send(h2Frame(FRAME_TYPE.GOAWAY, 0, 0, Buffer.alloc(8)));
    await vi.waitFor(() => expect(events.goaway).toHaveBeenCalledTimes(1));
    conn.close();
    await vi.waitFor(() => expect(events.closed).toHaveBeenCalledTimes(1));
  });

  it('sends the GOAWAY the owner asks for, and destroy(code) ends the connection with one naming the last stream', async () => {
    const { port, connections, events } = await serve();
    const conn = await client(port);
    conn.send(headers(1));
    await vi.waitFor(() => expect(events.stream).toHaveBeenCalledTimes(1));
    connections[0]?.goaway(H2_ERROR.NO_ERROR, 2 ** 31 - 1, 'draining');
    expect(goawayOf(await conn.waitFor(isGoaway))).toEqual({ lastStreamId: 2 ** 31 - 1, code: 0, debug: 'draining' });
    expect(connections[0]?.closed).toBe(false);
    connections[0]?.destroy(H2_ERROR.ENHANCE_YOUR_CALM, 'calm');
    await conn.closed;
    expect(connections[0]?.closed).toBe(true);
    expect(goawayOf(conn.frames.filter(isGoaway)[1] as ServerFrame)).toEqual({
      lastStreamId: 1,
      code: H2_ERROR.ENHANCE_YOUR_CALM,
      debug: 'calm',
    });
  });

  it('refuses a client that does not open with the preface, and says so to the owner', async () => {
    const { port, events } = await serve();
    const socket: Socket = connect(port, '127.0.0.1');
    closers.push(() => socket.destroy());
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {});
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(events.handshakeFailed).toHaveBeenCalledWith('preface');
    expect(events.stream).not.toHaveBeenCalled();
  });

  it('closes a connection that sends nothing within the handshake timeout', async () => {
    const { port, events } = await serve(100);
    const socket = connect(port, '127.0.0.1');
    closers.push(() => socket.destroy());
    socket.on('error', () => {});
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(events.handshakeFailed).toHaveBeenCalledWith('timeout');
  });
});
