/**
 * The transport's own HTTP/2 (src/transport/http2/wire), frame by frame on bare TCP
 * connections and with node:http2 clients: flow control both ways, header blocks in
 * CONTINUATION frames, the stream limit, and the guards (CONTINUATION flood, the memory
 * ceiling; Rapid Reset and MadeYouReset are stream-reset-budget.load.test.ts's). h2spec runs the rest of RFC 9113 (h2spec.integration.test.ts).
 */
import { type ClientHttp2Session, type Settings, connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallContext, type ResponseStream, GrpcStatus } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import {
  FRAME_FLAG,
  FRAME_TYPE,
  FrameConnection,
  type ServerFrame,
  frame,
  grpcHeaders,
  h2Frame,
  rawRequest,
  requestBlock,
  unframe,
} from './helpers/raw.js';
import { UNARY, errorCode, fields, isType, json, u32 } from './helpers/frame-exchange.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';
import { sleep } from '../../bench/kit/wait.js';

const windowUpdate = (streamId: number, increment: number): Buffer => h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, streamId, u32(increment));
const settings = (id: number, value: number): Buffer => Buffer.concat([Buffer.from([0, id]), u32(value)]);

const services = (extra: Partial<Record<string, unknown>> = {}) =>
  [
    [
      PROBE,
      {
        Unary: async (request: { wait?: boolean; delayMs?: number }, call: CallContext) => {
          if (request?.wait) await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }));
          if (request?.delayMs) await sleep(request.delayMs);
          return request;
        },
        ServerStream: async (request: { count: number; bytes: number }, responses: ResponseStream<unknown>) => {
          for (let i = 0; i < request.count; i++) await responses.write({ i, fill: 'x'.repeat(request.bytes) });
        },
        ClientStream: async (requests: AsyncIterable<{ fill: string }>) => {
          let bytes = 0;
          for await (const request of requests) bytes += request.fill.length;
          return { bytes };
        },
        Bidi: async (_requests: AsyncIterable<unknown>, responses: ResponseStream<unknown>) => {
          await responses.write({ first: true });
        },
        ...extra,
      },
    ],
  ] as const;

let port: number;
beforeAll(async () => {
  ({ port } = await startHttp2(services() as never, { maxReceiveMessageBytes: 1 << 20 }));
});
afterAll(closeAllServers);

/** Runs `use` on a node:http2 client of the shared server with `settings`, and closes it. */
async function withSession(settings: Settings, use: (client: ClientHttp2Session) => Promise<void>): Promise<void> {
  const client = await new Promise<ClientHttp2Session>((resolve, reject) => {
    const connecting = connect(`http://127.0.0.1:${port}`, { settings });
    connecting.once('remoteSettings', () => resolve(connecting));
    connecting.once('error', reject);
  });
  try {
    await use(client);
  } finally {
    client.close();
  }
}

/** Runs `use` on a bare frame connection to `target` (SETTINGS payload `settingsPayload`), and closes it. */
async function withFrames(target: number, use: (conn: FrameConnection) => Promise<void>, settingsPayload?: Buffer): Promise<void> {
  const conn = await FrameConnection.open(target, settingsPayload);
  try {
    await use(conn);
  } finally {
    conn.close();
  }
}

/** Waits for the HEADERS frame that ends stream `streamId` (trailers, or Trailers-Only). */
const endOf = (conn: FrameConnection, streamId: number): Promise<ServerFrame> =>
  conn.waitFor((f) => f.type === FRAME_TYPE.HEADERS && f.streamId === streamId && (f.flags & FRAME_FLAG.END_STREAM) !== 0);

/** One unary call's frames: HEADERS, then its message in DATA with END_STREAM. */
const unaryCall = (streamId: number, request: unknown): Buffer[] => [
  h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, streamId, requestBlock(UNARY)),
  h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, streamId, frame(json(request))),
];

describe('flow control', () => {
  it('holds the response headers while the client grants no window, then sends them with the first DATA, never past the window', async () => {
    await withFrames(
      port,
      async (conn) => {
        const message = json({ text: 'a'.repeat(100) });
        conn.send(
          h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock(UNARY)),
          h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 1, frame(message)),
        );
        await sleep(200);
        expect(conn.onStream(1)).toEqual([]);
        conn.send(windowUpdate(1, 10));
        await conn.waitFor(isType(FRAME_TYPE.DATA, 1));
        expect(conn.onStream(1).map((f) => [f.type, f.payload.length])).toEqual([
          [FRAME_TYPE.HEADERS, conn.onStream(1)[0]?.payload.length],
          [FRAME_TYPE.DATA, 10],
        ]);
        expect(fields(conn.onStream(1)[0] as ServerFrame)).toMatchObject({ ':status': '200', 'content-type': 'application/grpc' });
        conn.send(windowUpdate(1, 1000));
        const trailers = await endOf(conn, 1);
        expect(fields(trailers)).toEqual({ 'grpc-status': '0' });
        const body = Buffer.concat(
          conn
            .onStream(1)
            .filter(isType(FRAME_TYPE.DATA))
            .map((f) => f.payload),
        );
        expect(unframe(body)[0]?.bytes).toEqual(message);
      },
      settings(4, 0),
    );
  });

  it('streams 2 MB of responses to a client whose stream window is 1 KiB', async () => {
    await withSession({ initialWindowSize: 1024 }, async (client) => {
      const res = await rawRequest(client, {
        headers: grpcHeaders('/test.Probe/ServerStream'),
        chunks: [frame(json({ count: 20, bytes: 100_000 }))],
      });
      expect(res.status).toBe(GrpcStatus.OK);
      const messages = unframe(res.body).map((m) => JSON.parse(m.bytes.toString()) as { i: number; fill: string });
      expect(messages.map((m) => [m.i, m.fill.length])).toEqual(Array.from({ length: 20 }, (_, i) => [i, 100_000]));
    });
  });

  it('returns window to a client that sends 3 MB on one stream, past the 1 MiB stream window', async () => {
    await withSession({}, async (client) => {
      const chunks = Array.from({ length: 50 }, () => frame(json({ fill: 'y'.repeat(60_000) })));
      const res = await rawRequest(client, { headers: grpcHeaders('/test.Probe/ClientStream'), chunks });
      expect(res.status).toBe(GrpcStatus.OK);
      expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual({ bytes: 50 * 60_000 });
    });
  });
});

describe('header blocks and stream limits', () => {
  it('serves a request whose header block comes in a HEADERS and two CONTINUATION frames', async () => {
    await withFrames(port, async (conn) => {
      const block = requestBlock(UNARY);
      const third = Math.ceil(block.length / 3);
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, 0, 1, block.subarray(0, third)),
        h2Frame(FRAME_TYPE.CONTINUATION, 0, 1, block.subarray(third, 2 * third)),
        h2Frame(FRAME_TYPE.CONTINUATION, FRAME_FLAG.END_HEADERS, 1, block.subarray(2 * third)),
        h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 1, frame(json({ split: true }))),
      );
      const trailers = await endOf(conn, 1);
      expect(fields(trailers)).toEqual({ 'grpc-status': '0' });
    });
  });

  it('refuses a stream beyond maxConcurrentStreams with REFUSED_STREAM, and serves once one closes', async () => {
    const { port: limited } = await startHttp2(services() as never, { maxConcurrentStreams: 1 });
    await withFrames(limited, async (conn) => {
      conn.send(...unaryCall(1, { wait: true }), ...unaryCall(3, {}));
      expect(errorCode(await conn.waitFor(isType(FRAME_TYPE.RST_STREAM, 3)))).toBe(7);
      conn.send(h2Frame(FRAME_TYPE.RST_STREAM, 0, 1, u32(8)), ...unaryCall(5, { after: true }));
      const trailers = await endOf(conn, 5);
      expect(fields(trailers)).toEqual({ 'grpc-status': '0' });
    });
  });

  it('answers PING, and ignores a PING ack it did not ask for (node:http2 ends the connection there)', async () => {
    await withFrames(port, async (conn) => {
      conn.send(h2Frame(FRAME_TYPE.PING, FRAME_FLAG.ACK, 0, Buffer.alloc(8, 1)), h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.alloc(8, 2)));
      const ack = await conn.waitFor((f) => f.type === FRAME_TYPE.PING && (f.flags & FRAME_FLAG.ACK) !== 0);
      expect(ack.payload).toEqual(Buffer.alloc(8, 2));
      expect(conn.frames.some(isType(FRAME_TYPE.GOAWAY))).toBe(false);
    });
  });
});

describe('stream endings', () => {
  it('after the status, a client still sending gets RST_STREAM NO_ERROR, and its late DATA is dropped without more resets', async () => {
    await withFrames(port, async (conn) => {
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock('/test.Probe/Bidi')),
        h2Frame(FRAME_TYPE.DATA, 0, 1, frame(json({}))),
      );
      await conn.waitFor(isType(FRAME_TYPE.RST_STREAM, 1));
      expect(conn.onStream(1).map((f) => [f.type, f.flags & FRAME_FLAG.END_STREAM])).toEqual([
        [FRAME_TYPE.HEADERS, 0],
        [FRAME_TYPE.DATA, 0],
        [FRAME_TYPE.HEADERS, FRAME_FLAG.END_STREAM],
        [FRAME_TYPE.RST_STREAM, 0],
      ]);
      expect(errorCode(conn.onStream(1)[3] as ServerFrame)).toBe(0);
      conn.send(
        h2Frame(FRAME_TYPE.DATA, 0, 1, frame(json({ late: 1 }))),
        h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 1, frame(json({ late: 2 }))),
      );
      conn.send(h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.alloc(8, 7)));
      await conn.waitFor((f) => f.type === FRAME_TYPE.PING && (f.flags & FRAME_FLAG.ACK) !== 0);
      expect(conn.onStream(1).filter(isType(FRAME_TYPE.RST_STREAM))).toHaveLength(1);
    });
  });

  it('a call that fails on the DATA that ends its request gets its status and no RST_STREAM: the client has half-closed (§5.1)', async () => {
    await withFrames(port, async (conn) => {
      // The compressed flag without grpc-encoding: the call fails as it takes the message.
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock(UNARY)),
        h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 1, frame(json({}), true)),
      );
      expect(fields(await endOf(conn, 1))['grpc-status']).toBe(String(GrpcStatus.INTERNAL));
      conn.send(h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.alloc(8, 7)));
      await conn.waitFor((f) => f.type === FRAME_TYPE.PING && (f.flags & FRAME_FLAG.ACK) !== 0);
      expect(conn.onStream(1).map((f) => f.type)).toEqual([FRAME_TYPE.HEADERS]);
    });
  });

  it('answers a client that half-closes TCP after its request, then ends the connection', async () => {
    await withFrames(port, async (conn) => {
      conn.send(...unaryCall(1, { delayMs: 50 }));
      conn.end();
      const trailers = await endOf(conn, 1);
      expect(fields(trailers)).toEqual({ 'grpc-status': '0' });
      await conn.closed;
    });
  });

  it.each([
    ['a value with CR LF', 'x-a', 'ok\r\nx-injected: 1'],
    ['a value with NUL', 'x-a', 'a\0b'],
    ['a value with a leading space', 'x-a', ' padded'],
    ['a name with a space', 'x b', 'v'],
    ['a name with a colon', 'x:c', 'v'],
  ])('resets a request with %s (PROTOCOL_ERROR), and the connection serves on', async (_what, name, value) => {
    await withFrames(port, async (conn) => {
      conn.send(h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 1, requestBlock(UNARY, [[name, value]])));
      expect(errorCode(await conn.waitFor(isType(FRAME_TYPE.RST_STREAM, 1)))).toBe(1);
      conn.send(...unaryCall(3, {}));
      const trailers = await endOf(conn, 3);
      expect(fields(trailers)).toEqual({ 'grpc-status': '0' });
    });
  });

  it('serves a client that shrinks its HPACK table to 0 (a size update opens the next response block)', async () => {
    await withSession({ headerTableSize: 0 }, async (client) => {
      for (let i = 0; i < 2; i++) {
        const res = await rawRequest(client, { headers: grpcHeaders(UNARY), chunks: [frame(json({ i }))] });
        expect(res.status).toBe(GrpcStatus.OK);
      }
    });
  });
});

describe('guards', () => {
  it('CONTINUATION flood of empty frames: a header block in too many frames ends the connection', async () => {
    await withFrames(port, async (conn) => {
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, 0, 1, requestBlock(UNARY)),
        ...Array.from({ length: 10_000 }, () => h2Frame(FRAME_TYPE.CONTINUATION, 0, 1)),
      );
      expect(errorCode(await conn.waitFor(isType(FRAME_TYPE.GOAWAY)))).toBe(11);
      await conn.closed;
    });
  });

  it('CONTINUATION flood: a header block past twice the header list limit ends the connection before it is all read', async () => {
    await withFrames(port, async (conn) => {
      conn.send(h2Frame(FRAME_TYPE.HEADERS, 0, 1, requestBlock(UNARY)));
      for (let i = 0; i < 8; i++) conn.send(h2Frame(FRAME_TYPE.CONTINUATION, 0, 1, Buffer.alloc(16_000, 0x40)));
      expect(errorCode(await conn.waitFor(isType(FRAME_TYPE.GOAWAY)))).toBe(11);
      await conn.closed;
    });
  });

  it('memory ceiling: streams past what maxConnectionMemoryMb holds are refused (REFUSED_STREAM), not kept', async () => {
    const { port: ceiling } = await startHttp2(services() as never, { maxConnectionMemoryMb: 1 });
    await withFrames(ceiling, async (conn) => {
      const block = requestBlock(UNARY);
      // 300 streams: ~235 fit, and the rest stay within the refused-stream budget (REFUSED_STREAM_BURST).
      conn.send(...Array.from({ length: 300 }, (_, i) => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 2 * i + 1, block)));
      const refused = await conn.waitFor((f) => f.type === FRAME_TYPE.RST_STREAM && errorCode(f) === 7);
      // 1 MiB holds a few hundred open streams of ~4.4 KB each (4 KiB and the header list): the first ones were taken.
      expect(refused.streamId).toBeGreaterThan(2 * 100);
      expect(conn.frames.some(isType(FRAME_TYPE.GOAWAY))).toBe(false);
    });
  });

  it('memory ceiling: the stream whose partial messages cross maxConnectionMemoryMb is reset ENHANCE_YOUR_CALM, the rest are served', async () => {
    const { port: ceiling } = await startHttp2(services() as never, { maxConnectionMemoryMb: 1, maxReceiveMessageBytes: 1 << 20 });
    const client = connect(`http://127.0.0.1:${ceiling}`);
    try {
      const body = json({ fill: 'z'.repeat(200_000) });
      const prefix = frame(body).subarray(0, 5);
      // Eight streams each send a prefix and 150 kB of a 200 kB message: 1.2 MB held across them.
      const streams = Array.from({ length: 8 }, () => {
        const stream = client.request(grpcHeaders('/test.Probe/ClientStream'));
        stream.on('error', () => {});
        stream.write(Buffer.concat([prefix, body.subarray(0, 150_000)]));
        return stream;
      });
      const ends = streams.map(
        (stream) =>
          new Promise<{ code: number; status: string | undefined }>((resolve) => {
            let status: string | undefined;
            stream.on('trailers', (trailers) => (status = trailers['grpc-status'] as string | undefined));
            stream.on('data', () => {});
            stream.on('close', () => resolve({ code: stream.rstCode ?? 0, status }));
          }),
      );
      await sleep(300);
      for (const stream of streams) if (!stream.closed) stream.end(body.subarray(150_000));
      const outcomes = await Promise.all(ends);
      expect(outcomes.filter((o) => o.code === 11).length).toBeGreaterThanOrEqual(1);
      expect(outcomes.filter((o) => o.status === '0').length).toBeGreaterThanOrEqual(1);
      expect(outcomes.every((o) => o.code === 11 || o.status === '0')).toBe(true);
    } finally {
      client.close();
    }
  });
});
