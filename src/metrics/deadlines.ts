/**
 * What the deadlines on connected peers closed (src/base/peer-deadlines.ts), on either transport:
 *
 * - `jwt_grpc_request_timeouts_total`: calls answered DEADLINE_EXCEEDED and reset because
 *   their request was not whole (no END_STREAM) within requestTimeoutMs
 * - `jwt_grpc_connections_closed_total{reason}`: connections the server sent GOAWAY
 *   NO_ERROR and closed, `reason` `idle` (no open stream for maxConnectionIdleMs) or `age`
 *   (past maxConnectionAgeMs)
 *
 * Counted in plain numbers, read at scrape time; a cluster's primary sums its workers'.
 */
import type { Registry } from 'prom-client';
import type { ConnectionCloseReason, DeadlineCounters } from '../base/peer-deadlines.js';
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
  readonly #closed: Record<ConnectionCloseReason, number> = { idle: 0, age: 0 };

  constructor(registry: Registry) {
    registerComputed(registry, {
      name: 'jwt_grpc_request_timeouts_total',
      help: 'Calls answered DEADLINE_EXCEEDED and reset because their request was not whole (no END_STREAM) within requestTimeoutMs.',
      type: 'counter',
      samples: () => [{ labels: {}, value: this.#timeouts }],
    });
    registerComputed(registry, {
      name: 'jwt_grpc_connections_closed_total',
      help: 'Connections the server closed with GOAWAY NO_ERROR, by reason: idle (no open stream for maxConnectionIdleMs) or age (past maxConnectionAgeMs).',
      type: 'counter',
      samples: () => Object.entries(this.#closed).map(([reason, value]) => ({ labels: { reason }, value })),
    });
  }

  requestTimedOut(): void {
    this.#timeouts += 1;
  }

  connectionClosed(reason: ConnectionCloseReason): void {
    this.#closed[reason] += 1;
  }
}
