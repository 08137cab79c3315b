/**
 * The wire layer's flood and exhaustion guards (docs/http2-limits.md), each over a bare
 * TCP connection that does what no healthy client does, and each ending the connection
 * with GOAWAY ENHANCE_YOUR_CALM (or SETTINGS_TIMEOUT for a handshake never finished).
 */
import { type Server, type Socket, connect as connectTcp, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H2Connection } from '../../src/transport/http2/wire/connection.js';
import {
  GLITCH_BURST,
  MAX_CONTINUATION_FRAMES,
  MAX_QUEUED_CONTROL_ANSWERS,
  MAX_SETTINGS_ENTRIES,
  REFUSED_STREAM_BURST,
} from '../../src/transport/http2/wire/limits.js';
import { type CallContext, GrpcStatus as Status } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import {
  CLIENT_PREFACE,
  FRAME_FLAG,
  FRAME_TYPE,
  FrameConnection,
  frame,
  grpcHeaders,
  h2Frame,
  rawCall,
  requestBlock,
} from './helpers/raw.js';
import { UNARY, errorCode, isGoaway, u32 } from './helpers/frame-exchange.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';
import { sleep } from '../../bench/kit/wait.js';

const PRIORITY = 2;
const ENHANCE_YOUR_CALM = 11;
const repeat = (count: number, make: (i: number) => Buffer): Buffer[] => Array.from({ length: count }, (_, i) => make(i));
/** A request's HEADERS, its stream left open. */
const openStream = (streamId: number): Buffer => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, streamId, requestBlock(UNARY));

const services = [
  [
    PROBE,
    {
      Unary: async (request: unknown, call: CallContext) => {
        if ((request as { wait?: boolean })?.wait)
          await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }));
        return request;
      },
      ServerStream: async () => {},
      ClientStream: async () => ({}),
      Bidi: async () => {},
    },
  ],
] as const;

let port: number;
/**
 * The wire layer alone (H2Connection on a node:net server, no gRPC session above it): no
 * keepalive ping strikes to end a PING flood first, and a 200 ms handshake timeout.
 */
let wire: Server;
let wirePort: number;
beforeAll(async () => {
  ({ port } = await startHttp2(services as never));
  const events = { stream() {}, ping() {}, goaway() {}, closed() {}, internalError() {} };
  const limits = {
    maxConcurrentStreams: 100,
    maxHeaderListBytes: 16_384,
    maxHeldBytes: 1 << 20,
    resetBurst: 100,
    resetRate: 100,
    handshakeTimeoutMs: 200,
  };
  wire = createServer((socket) => new H2Connection(socket, limits, events));
  await new Promise<void>((resolve) => wire.listen(0, '127.0.0.1', resolve));
  wirePort = (wire.address() as { port: number }).port;
});
afterAll(async () => {
  await closeAllServers();
  await new Promise<void>((resolve) => wire.close(() => resolve()));
});

/** Sends `frames` on a fresh bare connection and returns the GOAWAY code the server ends it with. */
async function goawayAfter(target: number, frames: Buffer[], settingsPayload?: Buffer): Promise<number> {
  const conn = await FrameConnection.open(target, settingsPayload);
  try {
    conn.send(...frames);
    const code = errorCode(await conn.waitFor(isGoaway, 10_000));
    await conn.closed;
    return code;
  } finally {
    conn.close();
  }
}

/** The healthy call that proves the server goes on serving other connections. */
async function served(target: number): Promise<void> {
  const res = await rawCall(target, { headers: grpcHeaders(UNARY), chunks: [frame(Buffer.from('{"ok":1}'))] });
  expect(res.status).toBe(Status.OK);
}

describe('control frames', () => {
  it('PING flood: more unread PING acks than MAX_QUEUED_CONTROL_ANSWERS end the connection', async () => {
    // On the wire layer alone: on the gRPC server, keepalive's ping strikes end it at the third PING.
    const pings = repeat(20 * MAX_QUEUED_CONTROL_ANSWERS, () => h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.alloc(8)));
    expect(await goawayAfter(wirePort, pings)).toBe(ENHANCE_YOUR_CALM);
  });

  it('SETTINGS flood: more unread SETTINGS acks than MAX_QUEUED_CONTROL_ANSWERS end the connection', async () => {
    const settings = repeat(20 * MAX_QUEUED_CONTROL_ANSWERS, () => h2Frame(FRAME_TYPE.SETTINGS, 0, 0));
    expect(await goawayAfter(port, settings)).toBe(ENHANCE_YOUR_CALM);
  });

  it('SETTINGS of more than MAX_SETTINGS_ENTRIES entries ends the connection; that many is acknowledged', async () => {
    const entries = (count: number): Buffer => Buffer.concat(repeat(count, () => Buffer.from([0, 0xf0, 0, 0, 0, 1])));
    const conn = await FrameConnection.open(port);
    try {
      conn.send(h2Frame(FRAME_TYPE.SETTINGS, 0, 0, entries(MAX_SETTINGS_ENTRIES)));
      await conn.waitFor((f) => f.type === FRAME_TYPE.SETTINGS && f.flags === FRAME_FLAG.ACK);
    } finally {
      conn.close();
    }
    expect(await goawayAfter(port, [h2Frame(FRAME_TYPE.SETTINGS, 0, 0, entries(MAX_SETTINGS_ENTRIES + 1))])).toBe(ENHANCE_YOUR_CALM);
  });
});

describe('header blocks', () => {
  const fragments = (continuations: number): Buffer[] => {
    const block = requestBlock(UNARY);
    const cut = block.length - continuations;
    return [
      h2Frame(FRAME_TYPE.HEADERS, 0, 1, block.subarray(0, cut)),
      ...repeat(continuations, (i) =>
        h2Frame(FRAME_TYPE.CONTINUATION, i === continuations - 1 ? FRAME_FLAG.END_HEADERS : 0, 1, block.subarray(cut + i, cut + i + 1)),
      ),
    ];
  };

  it('a header block in MAX_CONTINUATION_FRAMES CONTINUATIONs is served; one more ends the connection', async () => {
    const conn = await FrameConnection.open(port);
    try {
      conn.send(...fragments(MAX_CONTINUATION_FRAMES), h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 1, frame(Buffer.from('{}'))));
      await conn.waitFor((f) => f.type === FRAME_TYPE.HEADERS && (f.flags & FRAME_FLAG.END_STREAM) !== 0);
    } finally {
      conn.close();
    }
    expect(await goawayAfter(port, fragments(MAX_CONTINUATION_FRAMES + 1))).toBe(ENHANCE_YOUR_CALM);
  });

  it('empty HEADERS without END_STREAM (a malformed request each) spend the glitch budget', async () => {
    const empty = repeat(2 * GLITCH_BURST, (i) => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 2 * i + 1));
    expect(await goawayAfter(port, empty)).toBe(ENHANCE_YOUR_CALM);
  });
});

describe('the glitch budget', () => {
  it('PRIORITY flood: past GLITCH_BURST PRIORITY frames the connection ends', async () => {
    const priorities = repeat(2 * GLITCH_BURST, () => h2Frame(PRIORITY, 0, 1, Buffer.from([0, 0, 0, 3, 16])));
    expect(await goawayAfter(port, priorities)).toBe(ENHANCE_YOUR_CALM);
  });

  it('WINDOW_UPDATE flood on a stream closed long ago: past GLITCH_BURST the connection ends', async () => {
    // 200 streams opened and reset: stream 1 is no longer among the recently closed, where a late window update is a race.
    const cycled = repeat(200, (i) => Buffer.concat([openStream(2 * i + 1), h2Frame(FRAME_TYPE.RST_STREAM, 0, 2 * i + 1, u32(8))]));
    const updates = repeat(2 * GLITCH_BURST, () => h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, 1, u32(1)));
    expect(await goawayAfter(port, [...cycled, ...updates])).toBe(ENHANCE_YOUR_CALM);
  });

  it('a WINDOW_UPDATE that crosses the close of its stream is no glitch: the connection serves on', async () => {
    const conn = await FrameConnection.open(port);
    try {
      const late = repeat(2 * GLITCH_BURST, () => h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, 1, u32(1)));
      conn.send(
        openStream(1),
        h2Frame(FRAME_TYPE.RST_STREAM, 0, 1, u32(8)),
        ...late,
        openStream(3),
        h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 3, frame(Buffer.from('{}'))),
      );
      await conn.waitFor((f) => f.type === FRAME_TYPE.HEADERS && f.streamId === 3 && (f.flags & FRAME_FLAG.END_STREAM) !== 0);
      expect(conn.frames.some(isGoaway)).toBe(false);
    } finally {
      conn.close();
    }
  });

  it('empty DATA frames without END_STREAM: past GLITCH_BURST the connection ends', async () => {
    const empty = repeat(2 * GLITCH_BURST, () => h2Frame(FRAME_TYPE.DATA, 0, 1));
    expect(await goawayAfter(port, [openStream(1), ...empty])).toBe(ENHANCE_YOUR_CALM);
  });

  it('data dribble: a message in 1-byte DATA frames, past GLITCH_BURST of them, ends the connection', async () => {
    const message = frame(Buffer.from(JSON.stringify({ fill: 'x'.repeat(4 * GLITCH_BURST) })));
    const dribble = repeat(2 * GLITCH_BURST, (i) => h2Frame(FRAME_TYPE.DATA, 0, 1, message.subarray(i, i + 1)));
    expect(await goawayAfter(port, [openStream(1), ...dribble])).toBe(ENHANCE_YOUR_CALM);
    await served(port);
  });
});

describe('streams', () => {
  it('refused streams: past REFUSED_STREAM_BURST streams refused (memory ceiling), the connection ends', async () => {
    const { port: ceiling } = await startHttp2(services as never, { maxConnectionMemoryMb: 1 });
    const opened = repeat(1000, (i) => openStream(2 * i + 1));
    const conn = await FrameConnection.open(ceiling);
    try {
      conn.send(...opened);
      expect(errorCode(await conn.waitFor(isGoaway, 10_000))).toBe(ENHANCE_YOUR_CALM);
      const refused = conn.frames.filter((f) => f.type === FRAME_TYPE.RST_STREAM && f.payload.readUInt32BE(0) === 7);
      expect(refused.length).toBe(REFUSED_STREAM_BURST);
    } finally {
      conn.close();
    }
    await served(ceiling);
  });

  it('450 streams each holding part of a message: past the memory ceiling each is refused or reset, never held', async () => {
    const { port: ceiling } = await startHttp2(services as never, { maxConnectionMemoryMb: 2 });
    const partial = frame(Buffer.from(JSON.stringify({ fill: 'x'.repeat(2000) }))).subarray(0, 1000);
    const conn = await FrameConnection.open(ceiling);
    try {
      // 450 streams: past the ~390 that fit, fewer than the refused-stream budget (past it the connection ends).
      conn.send(...repeat(450, (i) => Buffer.concat([openStream(2 * i + 1), h2Frame(FRAME_TYPE.DATA, 0, 2 * i + 1, partial)])));
      await conn.waitFor((f) => f.type === FRAME_TYPE.RST_STREAM && f.streamId === 899, 10_000);
      // A stream costs ~5.4 KB here (4 KiB, its headers, 1,000 bytes): 2 MiB holds ~390 of them, and no more.
      const dropped = conn.frames.filter(
        (f) => f.type === FRAME_TYPE.RST_STREAM && [7, ENHANCE_YOUR_CALM].includes(f.payload.readUInt32BE(0)),
      );
      expect(dropped.length).toBeGreaterThan(450 - (2 << 20) / 5300);
    } finally {
      conn.close();
    }
    await served(ceiling);
  });
});

describe('ending a connection', () => {
  it("after its GOAWAY the server reads nothing more: a flood behind the error stays in the client's buffers", async () => {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const connecting = connectTcp(port, '127.0.0.1', () => resolve(connecting));
      connecting.once('error', reject);
    });
    socket.on('error', () => {});
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    try {
      // A PING on a stream is a connection error (PROTOCOL_ERROR); 64 MB of PINGs follow it.
      socket.write(Buffer.concat([CLIENT_PREFACE, h2Frame(FRAME_TYPE.PING, 0, 1, Buffer.alloc(8))]));
      const flood = Buffer.concat(repeat(4096, () => h2Frame(FRAME_TYPE.PING, 0, 0, Buffer.alloc(8))));
      for (let i = 0; i < (64 << 20) / flood.length; i++) socket.write(flood);
      await sleep(300);
      expect(received.includes(Buffer.from([FRAME_TYPE.GOAWAY, 0, 0, 0, 0, 0]))).toBe(true);
      // A server still reading would have taken the 64 MB in well under 300 ms on loopback.
      expect(socket.writableLength).toBeGreaterThan(32 << 20);
    } finally {
      socket.destroy();
    }
  });
});

describe('the handshake', () => {
  /** What the server sends on a connection that writes `first` and nothing more, up to its close. */
  async function until(first: Buffer): Promise<{ goaway: number; afterMs: number }> {
    const started = Date.now();
    const socket = connectTcp(wirePort, '127.0.0.1', () => socket.write(first));
    socket.on('error', () => {});
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => socket.once('close', resolve));
    const received = Buffer.concat(chunks);
    let goaway = -1;
    for (let at = 0; at + 9 <= received.length; at += 9 + received.readUIntBE(at, 3)) {
      if (received[at + 3] === FRAME_TYPE.GOAWAY) goaway = received.readUInt32BE(at + 13);
    }
    return { goaway, afterMs: Date.now() - started };
  }

  it('slowloris: a connection that sends no preface gets GOAWAY SETTINGS_TIMEOUT once the handshake timeout passes', async () => {
    const { goaway, afterMs } = await until(Buffer.alloc(0));
    expect(goaway).toBe(4);
    expect(afterMs).toBeGreaterThanOrEqual(150);
  });

  it('slowloris: the preface without the first SETTINGS is not enough', async () => {
    const { goaway } = await until(CLIENT_PREFACE.subarray(0, 24));
    expect(goaway).toBe(4);
  });
});
