/**
 * A port whose listening socket another process holds: a cluster's primary binds the port,
 * accepts each connection and hands it to a live worker over IPC (src/cluster/dispatcher.ts).
 * The worker's servers take them here instead of binding; everything past the accept (the
 * connection guard, TLS, HTTP/2, node:http) runs as on a port of their own.
 */
import type { Server as NetServer, Socket } from 'node:net';

/** One port handed over by the primary, as a worker's server sees it. @internal */
export interface HandedPort {
  /** The port the primary bound. */
  readonly port: number;
  /** From now on each connection handed over goes to `accept`; `undefined` stops taking them (each is then closed). */
  receive(accept: ((socket: Socket) => void) | undefined): void;
}

/** The ports of a cluster worker's server: gRPC always, discovery with the `httpPort` option. @internal */
export interface HandedPorts {
  readonly grpc: HandedPort;
  readonly discovery: HandedPort | undefined;
}

/**
 * Feeds `server` (node:net, node:tls or node:http) each connection `handed` brings, as if
 * it had accepted it, until the server closes; returns the port. Set up as node:net's own
 * accept would have: the server's half-open setting (a received socket has Node's default,
 * closed on the peer's FIN, which would cut a half-closing client's answers), no Nagle
 * delay (node:http's default; the gRPC wire sets its own). node:http starts tracking its
 * connections (the request head and request deadlines, closeAllConnections) on
 * `listening`, so the server is told it listens. @internal
 */
export function serveHanded(server: NetServer, handed: HandedPort): number {
  const allowHalfOpen = (server as NetServer & { allowHalfOpen?: boolean }).allowHalfOpen === true;
  handed.receive((socket) => {
    socket.allowHalfOpen = allowHalfOpen;
    socket.setNoDelay(true);
    server.emit('connection', socket);
  });
  server.once('close', () => handed.receive(undefined));
  server.emit('listening');
  return handed.port;
}
