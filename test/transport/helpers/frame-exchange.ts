/**
 * Frame-level exchanges with the own HTTP/2 server over a bare TCP connection: a probe
 * service to call, one unary call as frames, and what the server answered on a stream
 * (its RST_STREAM code or the grpc-status of its trailers). For the tests that state the
 * frames RFC 9113 requires of the server.
 */
import { HpackDecoder } from '../../../src/transport/http2/wire/hpack.js';
import type { CallContext } from '../../../src/contracts/handler-api.js';
import { PROBE } from './probe.js';
import { FRAME_FLAG, FRAME_TYPE, FrameConnection, type ServerFrame, frame, h2Frame, requestBlock } from './raw.js';
import type { Services } from './servers.js';

export const UNARY = '/test.Probe/Unary';
export const CLIENT_STREAM = '/test.Probe/ClientStream';
/** RFC 9113 §7 error code PROTOCOL_ERROR. */
export const PROTOCOL_ERROR = 0x1;

export const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** `value` as 4 bytes, big-endian: an error code or a window increment. */
export function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

/** Matches a frame of `type`, on `streamId` when given. */
export const isType =
  (type: number, streamId?: number) =>
  (f: ServerFrame): boolean =>
    f.type === type && (streamId === undefined || f.streamId === streamId);

/** Matches a GOAWAY frame. */
export const isGoaway = isType(FRAME_TYPE.GOAWAY);

/** The error code of a RST_STREAM or GOAWAY frame. */
export const errorCode = (f: ServerFrame): number => f.payload.readUInt32BE(f.type === FRAME_TYPE.GOAWAY ? 4 : 0);

/** The header fields of a HEADERS frame the server sent (its own blocks use no dynamic table). */
export function fields(f: ServerFrame): Record<string, string> {
  const list: string[] = [];
  new HpackDecoder().decode(f.payload, 0, f.payload.length, list, 1 << 16);
  return Object.fromEntries(Array.from({ length: list.length / 2 }, (_, i) => [list[2 * i], list[2 * i + 1]]));
}

/** The probe service: Unary echoes, ClientStream counts the `fill` characters it received. */
export function probeServices(): Services {
  return [
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
  ] as never;
}

/** Opens a frame connection to `port`, hands it to `use`, and closes it on every path. */
export async function withFrames(port: number, use: (conn: FrameConnection) => Promise<void>): Promise<void> {
  const conn = await FrameConnection.open(port);
  try {
    await use(conn);
  } finally {
    conn.close();
  }
}

/** The HEADERS frame that ends stream `streamId`, or its RST_STREAM, whichever comes first. */
export const endOrReset = (conn: FrameConnection, streamId: number): Promise<ServerFrame> =>
  conn.waitFor(
    (f) =>
      f.streamId === streamId &&
      (f.type === FRAME_TYPE.RST_STREAM || (f.type === FRAME_TYPE.HEADERS && (f.flags & FRAME_FLAG.END_STREAM) !== 0)),
  );

/** One unary call's frames: HEADERS, then its message in DATA with END_STREAM. */
export const unaryCall = (streamId: number): Buffer[] => [
  h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, streamId, requestBlock(UNARY)),
  h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, streamId, frame(json({ ok: 1 }))),
];

/** What the server answered on stream `streamId`: `RST_STREAM <code>`, or `grpc-status <code>` from its trailers. */
export async function outcome(conn: FrameConnection, streamId: number): Promise<string> {
  const last = await endOrReset(conn, streamId);
  return last.type === FRAME_TYPE.RST_STREAM ? `RST_STREAM ${errorCode(last)}` : `grpc-status ${fields(last)['grpc-status']}`;
}
