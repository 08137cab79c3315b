/**
 * Answers a client never reads (CVE-2019-9517's class, internal data buffering): bare TCP
 * clients that set SETTINGS_INITIAL_WINDOW_SIZE to 0 and never send WINDOW_UPDATE, so
 * every answer waits for window. The per-connection ceiling charges what a stream really
 * holds and the answers waiting; the process-wide ceiling bounds all connections together
 * while a client that reads is still served; a connection whose answers wait too long is
 * closed; one client address holds at most its share of the process's ceiling, so its
 * streams cannot take it from another address. Both transports. docs/http2-limits.md lists the guards.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type GrpcJsMemoryLimits, guardGrpcJsMemory } from '../../src/server/grpc-js-memory.js';
import { PEER_MEMORY, PROCESS_MEMORY } from '../../src/transport/http2/wire/process-memory.js';
import { READER_PROGRESS_MS } from '../../src/transport/http2/wire/limits.js';
import type { CallContext } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import { FRAME_FLAG, FRAME_TYPE, FrameConnection, frame, grpcHeaders, h2Frame, rawCall, requestBlock } from './helpers/raw.js';
import { errorCode, isGoaway } from './helpers/frame-exchange.js';
import { closeAllServers, startGrpcJs, startHttp2 } from './helpers/servers.js';
import { TRANSPORTS, closeAllServers as closeJwtServers, recordingLogger, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import { sleep } from '../../bench/kit/wait.js';

const UNARY = '/test.Probe/Unary';
const REFUSED_STREAM = 7;
const ENHANCE_YOUR_CALM = 11;
const MIB = 1 << 20;
/** SETTINGS_INITIAL_WINDOW_SIZE = 0: no stream may receive a byte of DATA. */
const ZERO_WINDOW = Buffer.from([0, 4, 0, 0, 0, 0]);
/** A request the Unary handler echoes: ~1 KB answers that wait for window. */
const REQUEST = frame(Buffer.from(JSON.stringify({ fill: 'x'.repeat(1000) })));

const services = [
  [
    PROBE,
    {
      Unary: async (request: unknown, _call: CallContext) => request,
      ServerStream: async () => {},
      ClientStream: async () => ({}),
      Bidi: async () => {},
    },
  ],
] as const;

const open = new Set<FrameConnection>();
afterEach(() => {
  for (const conn of open) conn.close();
  open.clear();
});
afterAll(async () => {
  await closeAllServers();
  await closeJwtServers();
});

/** A client that grants no window and sends `count` unary calls, `batch` at a time, letting the answers come between batches. */
async function zeroWindowClient(port: number, count: number, batch = 20): Promise<FrameConnection> {
  const conn = await FrameConnection.open(port, ZERO_WINDOW);
  open.add(conn);
  const block = requestBlock(UNARY);
  for (let first = 0; first < count; first += batch) {
    const frames: Buffer[] = [];
    for (let i = first; i < Math.min(count, first + batch); i++) {
      frames.push(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 2 * i + 1, block),
        h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 2 * i + 1, REQUEST),
      );
    }
    conn.send(...frames);
    await sleep(25);
  }
  await sleep(100);
  return conn;
}

const refusedOn = (conn: FrameConnection): number =>
  conn.frames.filter((f) => f.type === FRAME_TYPE.RST_STREAM && [REFUSED_STREAM, ENHANCE_YOUR_CALM].includes(f.payload.readUInt32BE(0)))
    .length;
const PING = Buffer.alloc(8);
const isPingAck = (f: { type: number; flags: number }): boolean => f.type === FRAME_TYPE.PING && (f.flags & FRAME_FLAG.ACK) !== 0;
const wellBehavedCall = (port: number) => rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(Buffer.from('{"hello":1}'))] });

describe('own transport (http2)', () => {
  it('per connection: a zero-window client is refused (REFUSED_STREAM) once its streams and waiting answers fill maxConnectionMemoryMb', async () => {
    const { port } = await startHttp2(services as never, { maxConnectionMemoryMb: 1 });
    // 280 calls: at 4 KiB a stream plus its headers and its ~1 KB answer, about 190 fit in
    // 1 MiB. Charged at 2 KiB with the answers free, all 280 were taken.
    const conn = await zeroWindowClient(port, 280);
    const refused = refusedOn(conn);
    expect(refused).toBeGreaterThan(60);
    expect(conn.frames.some(isGoaway)).toBe(false);
    // What the server holds for it stays at the ceiling (plus the answers of one batch).
    expect(PROCESS_MEMORY.held).toBeLessThan(1.05 * MIB);
    conn.close();
    await conn.closed;
    await sleep(50);
    expect(PROCESS_MEMORY.held).toBe(0);
  });

  it('process-wide: zero-window connections together are refused past maxProcessStreamMemoryMb, and a client that reads is still served', async () => {
    // Every client here is at 127.0.0.1: no share per address (the next describe has them), so the process's ceiling alone is tested.
    const { port } = await startHttp2(services as never, { maxProcessStreamMemoryMb: 1, peerSharePercent: 100 });
    // Four connections of 100 calls, each far under its own 64 MiB: only the process's 1 MiB refuses them.
    const conns = [];
    for (let i = 0; i < 4; i++) conns.push(await zeroWindowClient(port, 100));
    const refused = conns.reduce((sum, conn) => sum + refusedOn(conn), 0);
    expect(refused).toBeGreaterThan(100);
    // The ceiling, its reader reserve (a quarter), and the answers of one batch.
    expect(PROCESS_MEMORY.held).toBeLessThan(1.35 * MIB);
    const answer = await wellBehavedCall(port);
    expect(answer.status).toBe(0);
    for (const conn of conns) conn.close();
    await Promise.all(conns.map((conn) => conn.closed));
    await sleep(50);
    expect(PROCESS_MEMORY.held).toBe(0);
  });

  it('stall: a connection whose answers wait for window past maxFlowControlStallMs gets GOAWAY ENHANCE_YOUR_CALM and is closed', async () => {
    const { port } = await startHttp2(services as never, { maxFlowControlStallMs: 200 });
    const conn = await zeroWindowClient(port, 1);
    const goaway = await conn.waitFor(isGoaway, 2000);
    expect(errorCode(goaway)).toBe(ENHANCE_YOUR_CALM);
    await conn.closed;
    expect(PROCESS_MEMORY.held).toBe(0);
    // A client that reads is not touched by it.
    expect((await wellBehavedCall(port)).status).toBe(0);
  });

  it('stall: answers that keep moving, however slowly, do not close the connection', async () => {
    const { port } = await startHttp2(services as never, { maxFlowControlStallMs: 200 });
    const conn = await zeroWindowClient(port, 1);
    // 100 bytes of window every 80 ms: the ~1 KB answer trickles out over about a second.
    for (let i = 0; i < 12; i++) {
      conn.send(h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, 1, Buffer.from([0, 0, 0, 100])));
      await sleep(80);
    }
    expect(conn.frames.some(isGoaway)).toBe(false);
  });
});

describe('grpc-js transport', () => {
  const DEFAULTS: GrpcJsMemoryLimits = { maxConnectionBytes: 64 * MIB, maxProcessBytes: 256 * MIB, maxStallMs: 30_000 };
  const startGuarded = async (limits: Partial<GrpcJsMemoryLimits>) => {
    let guarded = false;
    const started = await startGrpcJs(services as never, {
      prepare: (server) => (guarded = guardGrpcJsMemory(server, { ...DEFAULTS, ...limits })),
    });
    expect(guarded).toBe(true);
    return started;
  };

  it('per connection: a zero-window client is refused (REFUSED_STREAM) once its calls fill maxConnectionMemoryMb', async () => {
    const { port } = await startGuarded({ maxConnectionBytes: MIB });
    // 150 calls: 64 fit in 1 MiB at 16 KiB each.
    const conn = await zeroWindowClient(port, 150);
    expect(refusedOn(conn)).toBeGreaterThan(60);
    expect(PROCESS_MEMORY.held).toBeLessThan(1.05 * MIB);
    conn.close();
    await conn.closed;
    await sleep(100);
    expect(PROCESS_MEMORY.held).toBe(0);
  });

  it('process-wide: zero-window connections together are refused past maxProcessStreamMemoryMb, and a client that reads is still served', async () => {
    // 2 MiB: a reader may hold 1/64 of it, 32 KiB, room for one call (16 KiB and its headers).
    const { port } = await startGuarded({ maxProcessBytes: 2 * MIB });
    const conns = [];
    for (let i = 0; i < 4; i++) conns.push(await zeroWindowClient(port, 60));
    expect(conns.reduce((sum, conn) => sum + refusedOn(conn), 0)).toBeGreaterThan(60);
    expect(PROCESS_MEMORY.held).toBeLessThan(1.3 * 2 * MIB);
    expect((await wellBehavedCall(port)).status).toBe(0);
    for (const conn of conns) conn.close();
    await Promise.all(conns.map((conn) => conn.closed));
    await sleep(100);
    expect(PROCESS_MEMORY.held).toBe(0);
  });

  it('stall: a connection whose answers wait for window past maxFlowControlStallMs gets GOAWAY ENHANCE_YOUR_CALM and is closed', async () => {
    const { port } = await startGuarded({ maxStallMs: 200 });
    const conn = await zeroWindowClient(port, 1);
    const goaway = await conn.waitFor(isGoaway, 2000);
    expect(errorCode(goaway)).toBe(ENHANCE_YOUR_CALM);
    await conn.closed;
    await sleep(50);
    expect(PROCESS_MEMORY.held).toBe(0);
    expect((await wellBehavedCall(port)).status).toBe(0);
  });

  it('stall: answers that keep going out, however slowly, do not close the connection', async () => {
    const { port } = await startGuarded({ maxStallMs: 200 });
    // node:http2 completes a write once all of it is out: here each ~1 KB answer gets its
    // whole window, one stream every 80 ms, 12 answers over about a second.
    const conn = await zeroWindowClient(port, 12);
    for (let i = 0; i < 12; i++) {
      conn.send(h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, 2 * i + 1, Buffer.from([0, 0, 0x10, 0])));
      await sleep(80);
    }
    expect(conn.frames.some(isGoaway)).toBe(false);
    expect(conn.frames.filter((f) => f.type === FRAME_TYPE.DATA).length).toBeGreaterThanOrEqual(10);
  });
});

describe.each(TRANSPORTS)('createJwtServer, transport %s', (transport) => {
  it('takes maxFlowControlStallMs: a health check whose answer waits for window closes the connection, with no warning logged', async () => {
    const logger = recordingLogger();
    const { port } = await startServer({ transport, keys: await sharedKeys(), maxFlowControlStallMs: 200, logger });
    const conn = await FrameConnection.open(port, ZERO_WINDOW);
    open.add(conn);
    const check = requestBlock('/grpc.health.v1.Health/Check');
    conn.send(
      h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, check),
      h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 1, frame(Buffer.alloc(0))),
    );
    expect(errorCode(await conn.waitFor(isGoaway, 2000))).toBe(ENHANCE_YOUR_CALM);
    await conn.closed;
    expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).not.toContain(
      'cannot bound the memory of calls on this @grpc/grpc-js: maxProcessStreamMemoryMb and maxFlowControlStallMs do not apply',
    );
  });
});

describe.each(TRANSPORTS)('one client address held to its share of maxProcessStreamMemoryMb, transport %s', (transport) => {
  it('half-open streams from one address, over 100 connections each small enough to count as reading, leave the budget to a caller at another', async () => {
    const { port } = await startServer({ transport, keys: await sharedKeys(), maxProcessStreamMemoryMb: 1 });
    const check = requestBlock('/grpc.health.v1.Health/Check');
    // Three streams opened and left silent (HEADERS, no DATA) on each connection: under a
    // connection's reader share (1/64 of the ceiling), so without a share per address they
    // would take the ceiling and its reserve (300 streams: ~1.3 MiB here, ~4.7 on grpc-js).
    const attacker: FrameConnection[] = [];
    for (let i = 0; i < 100; i++) {
      const conn = await FrameConnection.open(port, Buffer.alloc(0), '127.0.0.2');
      open.add(conn);
      attacker.push(conn);
      // A PING behind them: its ack says the server has taken the streams.
      conn.send(
        ...[1, 3, 5].map((id) => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, id, check)),
        h2Frame(FRAME_TYPE.PING, 0, 0, PING),
      );
    }
    await Promise.all(attacker.map((conn) => conn.waitFor(isPingAck, 5000)));
    const health = await rawCall(port, { headers: grpcHeaders('/grpc.health.v1.Health/Check'), chunks: [frame(Buffer.alloc(0))] });
    expect(health.status, 'a caller at 127.0.0.1 is served').toBe(0);
    expect(attacker.reduce((sum, conn) => sum + refusedOn(conn), 0)).toBeGreaterThan(100);
    // All the attacker holds: a quarter of the ceiling (peerSharePercent 25) at most.
    expect(PROCESS_MEMORY.held).toBeGreaterThan(0);
    expect(PROCESS_MEMORY.held).toBeLessThanOrEqual(MIB / 4);
    for (const conn of attacker) conn.close();
    await Promise.all(attacker.map((conn) => conn.closed));
    await expect.poll(() => PROCESS_MEMORY.held).toBe(0);
    // Every address leaves the count with its last connection.
    await expect.poll(() => PEER_MEMORY.size).toBe(0);
  });
});

describe.each(TRANSPORTS)('past the process ceiling, transport %s', (transport) => {
  it('a connection whose open stream made no progress for READER_PROGRESS_MS gets no part of the reserve; a fresh caller does', async () => {
    // No share per address (every client here is at 127.0.0.1): the reserve's rule alone.
    const { port } = await startServer({ transport, keys: await sharedKeys(), maxProcessStreamMemoryMb: 4, peerSharePercent: 100 });
    const check = requestBlock('/grpc.health.v1.Health/Check');
    const taken = (conn: FrameConnection): Promise<unknown> => {
      conn.send(h2Frame(FRAME_TYPE.PING, 0, 0, PING));
      return conn.waitFor(isPingAck, 5000);
    };
    // One stream opened and left silent (HEADERS, no DATA), then nothing for longer than READER_PROGRESS_MS.
    const stale = await FrameConnection.open(port);
    open.add(stale);
    stale.send(h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, check));
    await taken(stale);
    await sleep(READER_PROGRESS_MS + 300);
    // Fresh connections, each under the reader share (1/64 of the ceiling, 64 KiB), take the
    // process past its 4 MiB ceiling into the reserve: ~4.3 MiB (4 KiB and its headers a
    // stream on the own transport, 16 KiB a call on grpc-js).
    const [connections, perConnection] = transport === 'http2' ? [85, 12] : [90, 3];
    for (let i = 0; i < connections; i++) {
      const conn = await FrameConnection.open(port);
      open.add(conn);
      conn.send(...Array.from({ length: perConnection }, (_, s) => h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 2 * s + 1, check)));
      await taken(conn);
    }
    expect(PROCESS_MEMORY.held).toBeGreaterThan(4 * MIB);
    expect(PROCESS_MEMORY.held).toBeLessThan(4.5 * MIB);
    // A whole request on the stale connection: it holds under the reader share, and no answer waits, yet it is refused.
    stale.send(
      h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 3, check),
      h2Frame(FRAME_TYPE.DATA, FRAME_FLAG.END_STREAM, 3, frame(Buffer.alloc(0))),
    );
    const reset = await stale.waitFor((f) => f.type === FRAME_TYPE.RST_STREAM && f.streamId === 3, 5000);
    expect(errorCode(reset)).toBe(REFUSED_STREAM);
    const health = await rawCall(port, { headers: grpcHeaders('/grpc.health.v1.Health/Check'), chunks: [frame(Buffer.alloc(0))] });
    expect(health.status, 'a fresh connection reads: it gets the reserve').toBe(0);
  }, 20_000);
});
