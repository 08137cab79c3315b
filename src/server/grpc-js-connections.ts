/**
 * The port guard (src/base/connection-guard.ts) on a @grpc/grpc-js Server, which
 * makes its node:http2 servers itself at bind time and offers no option for a handshake
 * deadline or a connection cap. grpc-js (1.14) hands its (private) `commonServerOptions`
 * to `http2.createSecureServer` and makes each server in its (private)
 * `createHttp2Server`; both are reached here, the way channel-options.ts reaches the
 * first, and test/server/handshake.integration.test.ts notices when a grpc-js works differently.
 */
import type { Server } from '@grpc/grpc-js';
import { Buffer } from 'node:buffer';
import type { Http2Server, ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { ConnectionGuard } from '../base/connection-guard.js';
import { nodeHttp2 } from '../base/optional-deps.js';

interface GrpcJsInternals {
  commonServerOptions?: Record<string, unknown>;
  createHttp2Server?: (this: unknown, credentials: unknown) => Http2Server;
}

/**
 * Puts `guard` on every node:http2 server `server` makes from now on (call it before
 * bindAsync). Returns false, changing nothing, when grpc-js lacks the fields it needs.
 * @internal
 */
export function guardGrpcJsServer(server: Server, guard: ConnectionGuard): boolean {
  const internal = server as unknown as GrpcJsInternals;
  const common = internal.commonServerOptions;
  const create = internal.createHttp2Server;
  if (typeof common !== 'object' || common === null || typeof create !== 'function') return false;
  // node:tls bounds the TLS handshake; node:http2 a TLS connection whose ALPN chose no h2.
  Object.assign(common, { handshakeTimeout: guard.handshakeTimeoutMs, unknownProtocolTimeout: guard.handshakeTimeoutMs });
  internal.createHttp2Server = function (this: unknown, ...args: unknown[]): Http2Server {
    // Every argument passed on: another guard (grpc-js-memory.ts) may wrap the same method.
    const http2Server = (create as (...a: unknown[]) => Http2Server).apply(this, args);
    guardHttp2Server(http2Server, guard);
    return http2Server;
  };
  return true;
}

/** The cap, the TLS part of the deadline, and the rest of it for each session's preface and first SETTINGS. */
function guardHttp2Server(http2Server: Http2Server, guard: ConnectionGuard): void {
  // node:http2 makes a session synchronously in its own `connection` (plaintext) or
  // `secureConnection` (TLS) listener, which run after these: the socket of the next session.
  let next: Socket | undefined;
  http2Server.prependListener('connection', (socket: Socket) => {
    next = socket;
  });
  http2Server.prependListener('secureConnection', (socket: Socket) => {
    next = socket;
  });
  http2Server.on('unknownProtocol', (socket: Socket) => {
    guard.failed('tls');
    socket.destroy();
  });
  http2Server.on('session', (session: ServerHttp2Session) => {
    const socket = next;
    next = undefined;
    awaitSettings(session, socket === undefined ? guard.handshakeTimeoutMs : guard.remainingMs(socket), guard);
    if (socket !== undefined) trackStreams(session, socket, guard);
  });
  // Last: the cap gates every `connection` listener above, node:http2's and grpc-js's.
  guard.attach(http2Server);
}

/** Tells `guard` when `session` has a stream open, and how to close it (GOAWAY NO_ERROR, then destroyed) when it has none. */
function trackStreams(session: ServerHttp2Session, socket: Socket, guard: ConnectionGuard): void {
  let open = 0;
  let lastStreamId = 0;
  const evict = (): void => {
    session.goaway(nodeHttp2().constants.NGHTTP2_NO_ERROR, lastStreamId, Buffer.from('evicted'));
    session.destroy();
    socket.destroy();
  };
  session.on('stream', (stream: ServerHttp2Stream) => {
    lastStreamId = Math.max(lastStreamId, stream.id ?? 0);
    if (open++ === 0) guard.busy(socket);
    stream.once('close', () => {
      if (--open === 0) guard.idle(socket, evict);
    });
  });
}

/**
 * Closes `session` unless the client's preface and first SETTINGS arrive within `ms`. A
 * session error before them is a client that sent no HTTP/2 preface (nghttp2 ends the
 * session); a session that closes without either just went away, and is not counted.
 */
function awaitSettings(session: ServerHttp2Session, ms: number, guard: ConnectionGuard): void {
  let settled = false;
  const timer = setTimeout(() => {
    settled = true;
    guard.failed('timeout');
    session.destroy();
  }, ms).unref();
  session.once('remoteSettings', () => {
    settled = true;
    clearTimeout(timer);
  });
  session.on('error', () => {
    if (!settled) guard.failed('preface');
    settled = true;
    clearTimeout(timer);
  });
  session.once('close', () => clearTimeout(timer));
}
