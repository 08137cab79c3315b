/**
 * What the listening ports refused before any call (src/connection-guard.ts):
 *
 * - `jwt_grpc_handshake_failures_total{port, reason}`: connections closed before their
 *   handshake completed; `port` is `grpc`, `metrics` or `discovery`, `reason` `timeout`
 *   (no TLS handshake, HTTP/2 preface and SETTINGS, or request head within
 *   handshakeTimeoutMs), `tls` (a failed TLS handshake, or no ALPN protocol the port serves)
 *   or `preface` (not an HTTP/2 client)
 * - `jwt_grpc_connections_refused_total{port}`: connections closed as they were accepted
 *   because the port's cap of open connections was reached
 *
 * Counted in plain numbers, read at scrape time; a cluster's primary sums its workers'.
 */
import type { Registry } from 'prom-client';
import type { ConnectionCounters, HandshakeFailure, PortRole } from '../connection-guard.js';
import { registerComputed } from './computed.js';

/** The connection counters of one process's ports. @internal */
export class ConnectionMetrics implements ConnectionCounters {
  readonly #failures = new Map<string, { readonly labels: Readonly<Record<string, string>>; count: number }>();
  readonly #refused = new Map<PortRole, number>();

  constructor(registry: Registry) {
    registerComputed(registry, {
      name: 'jwt_grpc_handshake_failures_total',
      help: 'Connections closed before their handshake completed (TLS, HTTP/2 preface and SETTINGS, or HTTP request head), by port and reason.',
      type: 'counter',
      samples: () => [...this.#failures.values()].map(({ labels, count }) => ({ labels, value: count })),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_connections_refused_total',
      help: "Connections closed as they were accepted because the port's cap of open connections was reached, by port.",
      type: 'counter',
      samples: () => [...this.#refused].map(([port, count]) => ({ labels: { port }, value: count })),
    });
  }

  handshakeFailed(port: PortRole, reason: HandshakeFailure): void {
    const key = `${port}/${reason}`;
    const cell = this.#failures.get(key);
    if (cell === undefined) this.#failures.set(key, { labels: { port, reason }, count: 1 });
    else cell.count += 1;
  }

  refused(port: PortRole): void {
    this.#refused.set(port, (this.#refused.get(port) ?? 0) + 1);
  }
}
