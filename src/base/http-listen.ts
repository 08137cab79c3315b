import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JwtGrpcError } from './errors.js';
import { type ConnectionCounters, type ConnectionGuard, httpClientError } from './connection-guard.js';
import { type HandedPort, serveHanded } from './handed-port.js';

/** How often node:http checks its headers and request timeouts, at most (its default, 30 s, would let a slow head live 40 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * node:http's timeouts for a port whose request head must arrive within the port's
 * handshake deadline, and whose whole request within `requestTimeoutMs`. @internal
 */
export function headDeadline(
  handshakeTimeoutMs: number,
  requestTimeoutMs: number,
): {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: handshakeTimeoutMs,
    // node:http refuses a request timeout below the headers timeout.
    requestTimeout: Math.max(requestTimeoutMs, handshakeTimeoutMs),
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, handshakeTimeoutMs),
  };
}

/**
 * What the metrics and discovery ports share with the gRPC port: its handshake deadline,
 * the share of a port one client address may hold, and where refusals are counted. @internal
 */
export interface HttpPortLimits {
  readonly handshakeTimeoutMs: number;
  /** Percent; absent: PEER_SHARE_PERCENT. */
  readonly peerSharePercent?: number | undefined;
  readonly counters?: ConnectionCounters | undefined;
}

/**
 * An HTTP port that cannot be bound: named by what it serves and the option whose port it
 * is, as every binder of one says it (listenHttp, a cluster's primary). @internal
 */
export function cannotServe(what: string, host: string, port: number, field: string, err: NodeJS.ErrnoException): JwtGrpcError {
  return new JwtGrpcError('ERR_LISTEN', `cannot serve ${what} on ${host}:${port}: ${err.code ?? err.message}`, { field, cause: err });
}

/** A node:http(s) server bound by {@link listenHttp}. @internal */
export interface HttpListener {
  readonly port: number;
  /** Stops accepting and ends every open connection, so a keep-alive client cannot hold the close up. */
  close(): Promise<void>;
}

/**
 * Binds `server` on `host:port` (0: any free port), or serves what `handed` brings (a
 * cluster worker: the primary holds the port), with `guard`'s connection cap and
 * counts (a head past {@link headDeadline} is answered 408 and counted). A bind that fails
 * rejects with `ERR_LISTEN` naming what was to be served and the option whose port it was,
 * so the discovery and metrics endpoints fail the same way. @internal
 */
export async function listenHttp(
  server: Server,
  host: string,
  port: number,
  what: string,
  field: string,
  guard: ConnectionGuard,
  handed?: HandedPort,
): Promise<HttpListener> {
  guard.attach(server);
  guard.trackRequests(server);
  server.on('clientError', httpClientError(guard));
  if (handed !== undefined) return httpListener(server, guard, serveHanded(server, handed));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(cannotServe(what, host, port, field, err)));
    server.listen(port, host, () => resolve());
  });
  return httpListener(server, guard, (server.address() as AddressInfo).port);
}

function httpListener(server: Server, guard: ConnectionGuard, port: number): HttpListener {
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        guard.flush();
      }),
  };
}
