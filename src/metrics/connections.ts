/**
 * What the listening ports refused before any call (src/base/connection-guard.ts):
 *
 * - `jwt_grpc_handshake_failures_total{port, reason}`: connections closed before their
 *   handshake completed; `port` is `grpc`, `metrics` or `discovery`, `reason` `timeout`
 *   (no TLS handshake, HTTP/2 preface and SETTINGS, or request head within
 *   handshakeTimeoutMs), `tls` (a failed TLS handshake, or no ALPN protocol the port serves)
 *   or `preface` (not an HTTP/2 client, nor HTTP/1.1 where the port serves it)
 * - `jwt_grpc_connections_refused_total{port, reason}`: connections closed as they were
 *   accepted, `reason` `cap` (the port's cap of open connections was reached) or
 *   `peer_share` (the client's address held its share of the cap, `peerSharePercent`)
 *   or `peer_rate` (the address spent its burst of new connections)
 * - `jwt_grpc_connections_evicted_total{port, reason}`: connections closed at the cap to make
 *   room for a new one, `reason` `unused` (it never carried a request) or `idle` (none in flight)
 *
 * Counted in plain numbers, read at scrape time; a cluster's primary sums its workers'.
 */
import type { Registry } from 'prom-client';
import type { ConnectionCounters, EvictionReason, HandshakeFailure, PortRole, RefusalReason } from '../base/connection-guard.js';
import { registerComputed } from './computed.js';

/** The connection counters of one process's ports. @internal */
export class ConnectionMetrics implements ConnectionCounters {
  readonly #failures = new LabelledCounts();
  readonly #refused = new LabelledCounts();
  readonly #evicted = new LabelledCounts();

  constructor(registry: Registry) {
    registerComputed(registry, {
      name: 'jwt_grpc_handshake_failures_total',
      help: 'Connections closed before their handshake completed (TLS, HTTP/2 preface and SETTINGS, or HTTP request head), by port and reason.',
      type: 'counter',
      samples: () => this.#failures.samples(),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_connections_refused_total',
      help: "Connections closed as they were accepted because the port's cap of open connections, or the client address's share of it, was reached, by port and reason.",
      type: 'counter',
      samples: () => this.#refused.samples(),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_connections_evicted_total',
      help: 'Connections closed at the cap of open connections to make room for a new one, by port and reason: unused (never carried a request) or idle (none in flight).',
      type: 'counter',
      samples: () => this.#evicted.samples(),
    });
  }

  handshakeFailed(port: PortRole, reason: HandshakeFailure): void {
    this.#failures.add(port, reason);
  }

  refused(port: PortRole, reason: RefusalReason): void {
    this.#refused.add(port, reason);
  }

  evicted(port: PortRole, reason: EvictionReason): void {
    this.#evicted.add(port, reason);
  }
}

/** Counts by port and reason, in the order each pair was first counted. */
class LabelledCounts {
  readonly #cells = new Map<string, { readonly labels: Readonly<Record<string, string>>; count: number }>();

  add(port: string, reason: string): void {
    const key = `${port}/${reason}`;
    const cell = this.#cells.get(key);
    if (cell === undefined) this.#cells.set(key, { labels: { port, reason }, count: 1 });
    else cell.count += 1;
  }

  samples(): { labels: Readonly<Record<string, string>>; value: number }[] {
    return [...this.#cells.values()].map(({ labels, count }) => ({ labels, value: count }));
  }
}
