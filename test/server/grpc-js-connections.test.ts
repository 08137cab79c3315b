/**
 * The connection guard on grpc-js's server, on stand-ins for its internals and node:http2's
 * server: refused (fail closed) where the internals are missing, the handshake deadlines set,
 * the connection cap in front of grpc-js's own listener, a session that sends no SETTINGS in
 * time closed and counted, and a TLS connection without h2 closed and counted.
 */
import { EventEmitter } from 'node:events';
import type { Server } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionGuard } from '../../src/base/connection-guard.js';
import { silentLogger } from '../../src/base/log.js';
import { guardGrpcJsServer } from '../../src/server/grpc-js-connections.js';

class FakeSocket extends EventEmitter {
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

class FakeSession extends EventEmitter {
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

function setup(maxConnections = 10): {
  server: { commonServerOptions: Record<string, unknown>; createHttp2Server: (...args: unknown[]) => EventEmitter };
  failures: string[];
  refused: number[];
  created: unknown[][];
  grpcJsConnections: FakeSocket[];
  guard: ConnectionGuard;
} {
  const failures: string[] = [];
  const refused: number[] = [];
  const created: unknown[][] = [];
  const grpcJsConnections: FakeSocket[] = [];
  const guard = new ConnectionGuard({
    port: 'grpc',
    handshakeTimeoutMs: 1000,
    maxConnections,
    logger: silentLogger,
    counters: { handshakeFailed: (_port, reason) => void failures.push(reason), refused: () => void refused.push(1), evicted: () => {} },
  });
  const server = {
    commonServerOptions: { keep: true } as Record<string, unknown>,
    createHttp2Server(...args: unknown[]): EventEmitter {
      created.push(args);
      const http2Server = new EventEmitter();
      // grpc-js's own listener, there before the guard wraps the server.
      http2Server.on('connection', (socket: FakeSocket) => void grpcJsConnections.push(socket));
      return http2Server;
    },
  };
  return { server, failures, refused, created, grpcJsConnections, guard };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('guardGrpcJsServer', () => {
  it('refuses (false) a grpc-js whose server lacks commonServerOptions or createHttp2Server', () => {
    const { guard } = setup();
    expect(guardGrpcJsServer({} as unknown as Server, guard)).toBe(false);
    expect(guardGrpcJsServer({ commonServerOptions: {} } as unknown as Server, guard)).toBe(false);
    expect(guardGrpcJsServer({ createHttp2Server: () => new EventEmitter() } as unknown as Server, guard)).toBe(false);
  });

  it("sets node's TLS and unknown-protocol deadlines to the handshake timeout", () => {
    const { server, guard } = setup();
    expect(guardGrpcJsServer(server as unknown as Server, guard)).toBe(true);
    expect(server.commonServerOptions).toEqual({ keep: true, handshakeTimeout: 1000, unknownProtocolTimeout: 1000 });
  });

  it('passes every argument on to the method it wraps', () => {
    const { server, guard, created } = setup();
    guardGrpcJsServer(server as unknown as Server, guard);
    server.createHttp2Server('credentials', { more: true });
    expect(created).toEqual([['credentials', { more: true }]]);
  });

  it("refuses connections past the cap before grpc-js's listener sees them, and counts them", () => {
    const { server, guard, refused, grpcJsConnections } = setup(2);
    guardGrpcJsServer(server as unknown as Server, guard);
    const http2Server = server.createHttp2Server();
    const sockets = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
    for (const socket of sockets) http2Server.emit('connection', socket);
    expect(grpcJsConnections).toEqual(sockets.slice(0, 2));
    expect(sockets.map((s) => s.destroyed)).toEqual([false, false, true]);
    expect(refused).toHaveLength(1);
    // A closed connection frees its place.
    sockets[0]?.destroy();
    const next = new FakeSocket();
    http2Server.emit('connection', next);
    expect(grpcJsConnections.at(-1)).toBe(next);
  });

  it('closes a session that sends no SETTINGS within the handshake deadline, counted as a timeout', () => {
    vi.useFakeTimers();
    const { server, guard, failures } = setup();
    guardGrpcJsServer(server as unknown as Server, guard);
    const http2Server = server.createHttp2Server();
    const [slow, prompt] = [new FakeSession(), new FakeSession()];
    http2Server.emit('connection', new FakeSocket());
    http2Server.emit('session', slow);
    http2Server.emit('connection', new FakeSocket());
    http2Server.emit('session', prompt);
    prompt.emit('remoteSettings');
    vi.advanceTimersByTime(999);
    expect(slow.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect([slow.destroyed, prompt.destroyed]).toEqual([true, false]);
    expect(failures).toEqual(['timeout']);
  });

  it('counts a session that fails before its SETTINGS as a bad preface, once', () => {
    vi.useFakeTimers();
    const { server, guard, failures } = setup();
    guardGrpcJsServer(server as unknown as Server, guard);
    const http2Server = server.createHttp2Server();
    const session = new FakeSession();
    http2Server.emit('session', session);
    session.emit('error', new Error('bad preface'));
    session.emit('error', new Error('again'));
    vi.advanceTimersByTime(5000);
    expect(failures).toEqual(['preface']);
  });

  it('closes a TLS connection whose ALPN chose no h2, counted as a TLS failure', () => {
    const { server, guard, failures } = setup();
    guardGrpcJsServer(server as unknown as Server, guard);
    const socket = new FakeSocket();
    server.createHttp2Server().emit('unknownProtocol', socket);
    expect([socket.destroyed, failures]).toEqual([true, ['tls']]);
  });
});
