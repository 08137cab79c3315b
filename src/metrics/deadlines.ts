/**
 * What the deadlines on connected peers closed (src/base/peer-deadlines.ts), on either transport:
 *
 * - `jwt_grpc_request_timeouts_total`: calls answered DEADLINE_EXCEEDED and reset because
 *   their request was not whole (no END_STREAM) within requestTimeoutMs
 * - `jwt_grpc_connections_closed_total{reason, http_version}`: connections the server
 *   closed (HTTP/2: GOAWAY NO_ERROR first), `reason` `idle` (no open stream or request for
 *   maxConnectionIdleMs) or `age` (past maxConnectionAgeMs), `http_version` `h2` or
 *   `http/1.1` (served on the own transport's port too)
 *
 * Counted in plain numbers, read at scrape time; a cluster's primary sums its workers'.
 */
import type { Registry } from 'prom-client';
import type { ClosedHttpVersion, ConnectionCloseReason, DeadlineCounters } from '../base/peer-deadlines.js';
import { registerComputed } from './computed.js';

/**
 * The deadline counters of one process's gRPC server.
 *
 * @example
 * ```ts
 * const deadlines = new DeadlineMetrics(registry);
 * createHttp2GrpcServer({ deadlineCounters: deadlines });
 * ```
 * @internal
 */
export class DeadlineMetrics implements DeadlineCounters {
  #timeouts = 0;
  /** By reason, then HTTP version: every series is there from the start, at 0. */
  readonly #closed: Record<ConnectionCloseReason, Record<ClosedHttpVersion, number>> = {
    idle: { h2: 0, 'http/1.1': 0 },
    age: { h2: 0, 'http/1.1': 0 },
  };

  constructor(registry: Registry) {
    registerComputed(registry, {
      name: 'jwt_grpc_request_timeouts_total',
      help: 'Calls answered DEADLINE_EXCEEDED and reset because their request was not whole (no END_STREAM) within requestTimeoutMs.',
      type: 'counter',
      samples: () => [{ labels: {}, value: this.#timeouts }],
    });
    registerComputed(registry, {
      name: 'jwt_grpc_connections_closed_total',
      help: 'Connections the server closed (HTTP/2: with GOAWAY NO_ERROR), by reason: idle (no open stream or request for maxConnectionIdleMs) or age (past maxConnectionAgeMs), and HTTP version (h2, http/1.1).',
      type: 'counter',
      samples: () =>
        Object.entries(this.#closed).flatMap(([reason, byVersion]) =>
          Object.entries(byVersion).map(([httpVersion, value]) => ({ labels: { reason, http_version: httpVersion }, value })),
        ),
    });
  }

  requestTimedOut(): void {
    this.#timeouts += 1;
  }

  connectionClosed(reason: ConnectionCloseReason, httpVersion: ClosedHttpVersion): void {
    this.#closed[reason][httpVersion] += 1;
  }
}
