/**
 * Findings of the second review of the transport's own HTTP/2 (src/transport/http2/wire)
 * against RFC 9113 and RFC 7541, one `it` per finding, named with the section it breaks.
 * Each talks to a real server over a bare TCP connection and states the frames the RFC
 * requires. docs/review-wire-2026-11-25.md gives the verdict per section.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HpackDecoder } from '../../src/transport/http2/wire/hpack.js';
import type { CallContext } from '../../src/transport/handler-api.js';
import { PROBE } from './helpers/probe.js';
import { FRAME_FLAG, FRAME_TYPE, FrameConnection, type ServerFrame, frame, h2Frame, hpackLiteral, requestBlock } from './helpers/raw.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';

const UNARY = '/test.Probe/Unary';
const CLIENT_STREAM = '/test.Probe/ClientStream';
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const u32 = (value: number): Buffer => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};
const isType = (type: number, streamId?: number) => (f: ServerFrame) => f.type === type && (streamId === undefined || f.streamId === streamId);
const errorCode = (f: ServerFrame): number => f.payload.readUInt32BE(f.type === FRAME_TYPE.GOAWAY ? 4 : 0);
const PROTOCOL_ERROR = 0x1;

/** The header fields of a HEADERS frame the server sent (its own blocks use no dynamic table). */
function fields(f: ServerFrame): Record<string, string> {
  const list: string[] = [];
  new HpackDecoder().decode(f.payload, 0, f.payload.length, list, 1 << 16);
  return Object.fromEntries(Array.from({ length: list.length / 2 }, (_, i) => [list[2 * i], list[2 * i + 1]]));
}

const services = () =>
  [
    [
      PROBE,
      {
        Unary: async (request: unknown, _call: CallContext) => request,
        ServerStream: async () => {},
        Bidi: async () => {},
        ClientStream: async (requests: AsyncIterable<{ fill: string }>) => {
          let bytes = 0;
          for await (const request of requests) bytes += request.fill.length;
          return { bytes };
        },
      },
    ],
  ] as const;

let port: number;
beforeAll(async () => {
  ({ port } = await startHttp2(services() as never));
});
afterAll(closeAllServers);

async function withFrames(target: number, use: (conn: FrameConnection) => Promise<void>): Promise<void> {
  const conn = await FrameConnection.open(target);
  try {
    await use(conn);
  } finally {
    conn.close();
  }
}

/** The HEADERS frame that ends stream `streamId`, or its RST_STREAM, whichever comes first. */
const endOrReset = (conn: FrameConnection, streamId: number): Promise<ServerFrame> =>
  conn.waitFor((f) => f.streamId === streamId && (f.type === FRAME_TYPE.RST_STREAM || (f.type === FRAME_TYPE.HEADERS && (f.flags & FRAME_FLAG.END_STREAM) !== 0)));

/** One unary call's frames: HEADERS, then its message in DATA with END_STREAM. */
const unaryCall = (streamId: number): Buffer[] => [
  h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, streamId, requestBlock(UNARY)),
  h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, streamId, frame(json({ ok: 1 }))),
];

/** What the server answered on stream `streamId`: its RST_STREAM code, or the grpc-status of its trailers. */
async function outcome(conn: FrameConnection, streamId: number): Promise<string> {
  const last = await endOrReset(conn, streamId);
  return last.type === FRAME_TYPE.RST_STREAM ? `RST_STREAM ${errorCode(last)}` : `grpc-status ${fields(last)['grpc-status']}`;
}

describe('RFC 9113 review findings', () => {
  it.each([
    ['RST_STREAM (§6.4)', () => h2Frame(FRAME_TYPE.RST_STREAM, 0, 2, u32(8))],
    ['DATA (§6.1)', () => h2Frame(FRAME_TYPE.DATA, 0, 2, Buffer.from('x'))],
    ['WINDOW_UPDATE (§6.9)', () => h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, 2, u32(1))],
  ])('§5.1 idle state: %s on an even stream id below the last client stream (never opened, still idle) is a connection error PROTOCOL_ERROR', async (_name, make) => {
    await withFrames(port, async (conn) => {
      conn.send(...unaryCall(3));
      expect(await outcome(conn, 3)).toBe('grpc-status 0');
      conn.send(make());
      // Expected: GOAWAY PROTOCOL_ERROR. The server drops the frame (stream 2 is not above the last id, 3).
      const goaway = await conn.waitFor(isType(FRAME_TYPE.GOAWAY), 1000);
      expect(errorCode(goaway)).toBe(PROTOCOL_ERROR);
    });
  });

  it('§8.1.1: a request that ends with trailers after fewer DATA bytes than its content-length is malformed (RST_STREAM PROTOCOL_ERROR)', async () => {
    await withFrames(port, async (conn) => {
      const message = frame(json({ fill: 'abc' }));
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock(CLIENT_STREAM, [['content-length', '1000']])),
        h2Frame(FRAME_TYPE.DATA, 0, 1, message),
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 1, hpackLiteral('x-trailer', 'v')),
      );
      // Expected RST_STREAM PROTOCOL_ERROR; the server checks content-length only on DATA with END_STREAM, and answers the call.
      expect(await outcome(conn, 1)).toBe(`RST_STREAM ${PROTOCOL_ERROR}`);
    });
  });

  it.each([
    ['an uppercase field name (§8.2.1)', 'X-Trailer', 'v'],
    ['a connection-specific field (§8.2.2)', 'connection', 'close'],
    ['a value with a leading space (§8.2.1)', 'x-trailer', ' v'],
  ])('§8.1 / §8.2: request trailers with %s are malformed (RST_STREAM PROTOCOL_ERROR)', async (_name, name, value) => {
    await withFrames(port, async (conn) => {
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock(CLIENT_STREAM)),
        h2Frame(FRAME_TYPE.DATA, 0, 1, frame(json({ fill: 'abc' }))),
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 1, hpackLiteral(name, value)),
      );
      // Expected RST_STREAM PROTOCOL_ERROR; trailers are checked only for pseudo-headers, and the call is answered.
      expect(await outcome(conn, 1)).toBe(`RST_STREAM ${PROTOCOL_ERROR}`);
    });
  });

  it('§8.1.1 / §5.4.2: streams refused for a malformed content-length keep their memory charge, until every new stream is REFUSED_STREAM', async () => {
    const { port: ceiling } = await startHttp2(services() as never, { maxConnectionMemoryMb: 1 });
    await withFrames(ceiling, async (conn) => {
      const bad = requestBlock(UNARY, [['content-length', 'x']]);
      // 600 refused streams of ~2.2 KB each: past 1 MiB if their charge is never returned.
      conn.send(...Array.from({ length: 600 }, (_, i) => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 2 * i + 1, bad)));
      // Each is refused PROTOCOL_ERROR while the ceiling is not reached; the later ones get REFUSED_STREAM.
      await endOrReset(conn, 1199);
      // Nothing is open on the connection now: a well-formed call must be served, not REFUSED_STREAM.
      conn.send(...unaryCall(1201));
      expect(await outcome(conn, 1201)).toBe('grpc-status 0');
    });
  });
});
