/**
 * The memory guard on grpc-js's HTTP/2 server, on stand-ins for node:http2's server, sessions
 * and streams: refused (fail closed) without createHttp2Server, each stream charged to its
 * connection and the process and released on close, a stream past a ceiling refused with
 * REFUSED_STREAM before grpc-js sees it, a flood of refusals and answers stalled on flow
 * control both ending the connection with ENHANCE_YOUR_CALM.
 */
import { EventEmitter } from 'node:events';
import { constants } from 'node:http2';
import type { Server } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GRPC_JS_STREAM_COST_BYTES, type GrpcJsMemoryLimits, guardGrpcJsMemory } from '../../src/server/grpc-js-memory.js';
import { MemoryLedger } from '../../src/transport/http2/wire/budget.js';
import { REFUSED_STREAM_BURST, STALL_CHECKS_PER_BOUND } from '../../src/transport/http2/wire/limits.js';

class FakeSession extends EventEmitter {
  goaways: [number, string | undefined][] = [];
  destroyed = false;
  goaway(code: number, _last?: number, data?: Buffer): void {
    this.goaways.push([code, data?.toString()]);
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

class FakeStream extends EventEmitter {
  closedWith: number | undefined;
  bufferSize = 0;
  closed = false;
  rstCode = 0;
  constructor(readonly session: FakeSession) {
    super();
  }
  close(code: number): void {
    this.closedWith = code;
  }
  end(): void {
    this.closed = true;
    this.emit('close');
  }
}

const LIMITS: GrpcJsMemoryLimits = { maxConnectionBytes: 3 * GRPC_JS_STREAM_COST_BYTES, maxProcessBytes: 1 << 30, maxStallMs: 400 };

function setup(limits: GrpcJsMemoryLimits = LIMITS): { http2Server: EventEmitter; ledger: MemoryLedger; seen: FakeStream[] } {
  const ledger = new MemoryLedger();
  const seen: FakeStream[] = [];
  const server = {
    createHttp2Server(): EventEmitter {
      const http2Server = new EventEmitter();
      // grpc-js's own stream listener, there before the guard wraps the server.
      http2Server.on('stream', (stream: FakeStream) => void seen.push(stream));
      return http2Server;
    },
  };
  expect(guardGrpcJsMemory(server as unknown as Server, limits, ledger)).toBe(true);
  return { http2Server: server.createHttp2Server(), ledger, seen };
}

function open(http2Server: EventEmitter, session: FakeSession, rawHeaders: string[] = []): FakeStream {
  const stream = new FakeStream(session);
  http2Server.emit('stream', stream, {}, 0, rawHeaders);
  return stream;
}

function connect(http2Server: EventEmitter): FakeSession {
  const session = new FakeSession();
  http2Server.emit('session', session);
  return session;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('guardGrpcJsMemory', () => {
  it('refuses (false) a grpc-js whose server lacks createHttp2Server', () => {
    expect(guardGrpcJsMemory({} as unknown as Server, LIMITS, new MemoryLedger())).toBe(false);
  });

  it('charges each admitted stream to the process and releases it on close', () => {
    const { http2Server, ledger, seen } = setup();
    const session = connect(http2Server);
    const stream = open(http2Server, session);
    expect(seen).toEqual([stream]);
    expect(ledger.held).toBe(GRPC_JS_STREAM_COST_BYTES);
    stream.end();
    expect(ledger.held).toBe(0);
    session.destroy();
  });

  it('charges a stream its header list as RFC 7541 sizes it (32 bytes an entry over name and value), released with it', () => {
    const { http2Server, ledger } = setup();
    const session = connect(http2Server);
    // 14 KiB of headers, which HPACK may send as a few indexed bytes each time.
    const stream = open(http2Server, session, [':path', '/jwt.services.JwtService/GenerateJwt', 'x-fill', 'x'.repeat(14 << 10)]);
    expect(ledger.held).toBe(GRPC_JS_STREAM_COST_BYTES + 5 + 36 + 6 + (14 << 10) + 2 * 32);
    stream.end();
    expect(ledger.held).toBe(0);
    session.destroy();
  });

  it("refuses a stream past the connection's ceiling with REFUSED_STREAM before grpc-js sees it", () => {
    const { http2Server, ledger, seen } = setup();
    const session = connect(http2Server);
    const admitted = [open(http2Server, session), open(http2Server, session), open(http2Server, session)];
    const refused = open(http2Server, session);
    expect(seen).toEqual(admitted);
    expect(refused.closedWith).toBe(constants.NGHTTP2_REFUSED_STREAM);
    expect(ledger.held).toBe(3 * GRPC_JS_STREAM_COST_BYTES);
    // Another connection has its own ceiling.
    expect(seen).toContain(open(http2Server, connect(http2Server)));
    admitted[0]?.end();
    expect(seen).toContain(open(http2Server, session));
  });

  it('refuses a stream past the process ceiling on a connection that holds more than its share', () => {
    const { http2Server, seen } = setup({ ...LIMITS, maxConnectionBytes: 1 << 30, maxProcessBytes: 2 * GRPC_JS_STREAM_COST_BYTES });
    const session = connect(http2Server);
    open(http2Server, session);
    open(http2Server, session);
    const refused = open(http2Server, session);
    expect(seen).toHaveLength(2);
    expect(refused.closedWith).toBe(constants.NGHTTP2_REFUSED_STREAM);
  });

  it('ends a connection that keeps opening refused streams past the burst with ENHANCE_YOUR_CALM', () => {
    const { http2Server } = setup({ ...LIMITS, maxConnectionBytes: 0 });
    const session = connect(http2Server);
    for (let i = 0; i < REFUSED_STREAM_BURST; i++) open(http2Server, session);
    expect(session.destroyed).toBe(false);
    open(http2Server, session);
    expect(session.goaways).toEqual([[constants.NGHTTP2_ENHANCE_YOUR_CALM, undefined]]);
    expect(session.destroyed).toBe(true);
  });

  it('ends a connection whose answers wait on flow control past the stall bound, and releases all it held', () => {
    vi.useFakeTimers();
    const { http2Server, ledger } = setup();
    const session = connect(http2Server);
    const stream = open(http2Server, session);
    stream.bufferSize = 1000;
    const period = LIMITS.maxStallMs / STALL_CHECKS_PER_BOUND;
    // The first check starts the wait; then STALL_CHECKS_PER_BOUND checks without a byte moving.
    vi.advanceTimersByTime(period * STALL_CHECKS_PER_BOUND);
    expect(session.destroyed).toBe(false);
    expect(ledger.held).toBe(GRPC_JS_STREAM_COST_BYTES + 1000);
    vi.advanceTimersByTime(period);
    expect(session.goaways).toEqual([[constants.NGHTTP2_ENHANCE_YOUR_CALM, 'answers waited for flow-control window too long']]);
    expect(session.destroyed).toBe(true);
    expect(ledger.held).toBe(0);
  });

  it('keeps a connection whose waiting answers move', () => {
    vi.useFakeTimers();
    const { http2Server } = setup();
    const session = connect(http2Server);
    const stream = open(http2Server, session);
    stream.bufferSize = 10_000;
    const period = LIMITS.maxStallMs / STALL_CHECKS_PER_BOUND;
    for (let i = 0; i < 3 * STALL_CHECKS_PER_BOUND; i++) {
      vi.advanceTimersByTime(period);
      stream.bufferSize -= 100;
    }
    expect(session.destroyed).toBe(false);
    session.destroy();
  });
});
