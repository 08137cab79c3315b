/**
 * Deadlines for what a connected peer holds, on both transports (the own HTTP/2 server's
 * src/transport/http2/session.ts, grpc-js's src/server/grpc-js-deadlines.ts): a request that
 * is not whole within `requestTimeoutMs` is answered DEADLINE_EXCEEDED and reset; a
 * connection without an open stream for `maxConnectionIdleMs`, or older than
 * `maxConnectionAgeMs`, gets GOAWAY NO_ERROR and is closed (grpc-go's MaxConnectionIdle and
 * MaxConnectionAge). What they close is counted (when metrics are on) and logged at most once
 * per LOG_INTERVAL_MS with the counts, never a line per stream or connection.
 */
import { ThrottledWarning } from './connection-guard.js';
import type { Logger } from './log.js';

/**
 * Each deadline is checked this many times per bound, by one timer per connection (never
 * one per stream): a stream or connection is closed once the whole bound has passed, at
 * most a quarter later, as the flow-control stall check does.
 */
export const DEADLINE_CHECKS_PER_BOUND = 4;

/** Why the server closed a connection it had nothing against: no open stream for the idle bound, or past its age. */
export type ConnectionCloseReason = 'idle' | 'age';

/** The HTTP version of a connection the server closed, as ALPN names it (RFC 7301): HTTP/1.1 is served on the own transport's port too. */
export type ClosedHttpVersion = 'h2' | 'http/1.1';

/** Where the deadlines count; the server's metrics implement it (src/metrics/deadlines.ts). */
export interface DeadlineCounters {
  requestTimedOut(): void;
  connectionClosed(reason: ConnectionCloseReason, httpVersion: ClosedHttpVersion): void;
}

/** The bounds, as the option table resolves them. */
export interface PeerDeadlineSettings {
  readonly requestTimeoutMs: number;
  readonly maxConnectionIdleMs: number;
  readonly maxConnectionAgeMs: number;
}

/**
 * One server's report of what its deadlines closed: counters and throttled log lines.
 *
 * @example
 * ```ts
 * const report = new PeerDeadlineReport(logger, metrics?.deadlines, { requestTimeoutMs: 10_000, maxConnectionIdleMs: 60_000, maxConnectionAgeMs: 1_800_000 });
 * report.requestTimedOut();
 * ```
 * @internal
 */
export class PeerDeadlineReport {
  readonly settings: PeerDeadlineSettings;
  readonly #counters: DeadlineCounters | undefined;
  readonly #timeouts: ThrottledWarning;
  readonly #closes: ThrottledWarning;

  constructor(logger: Logger, counters: DeadlineCounters | undefined, settings: PeerDeadlineSettings) {
    this.settings = settings;
    this.#counters = counters;
    this.#timeouts = new ThrottledWarning(logger, 'calls answered DEADLINE_EXCEEDED: their request was not whole in time', {
      port: 'grpc',
      requestTimeoutMs: settings.requestTimeoutMs,
    });
    // Routine (clients reconnect), so at info: a warning would cry wolf every 10 s.
    this.#closes = new ThrottledWarning(
      logger,
      'connections closed with GOAWAY: idle, or past their age',
      { port: 'grpc', maxConnectionIdleMs: settings.maxConnectionIdleMs, maxConnectionAgeMs: settings.maxConnectionAgeMs },
      'info',
    );
  }

  /** A call's request did not arrive whole within requestTimeoutMs: it was answered and reset. */
  requestTimedOut(): void {
    this.#counters?.requestTimedOut();
    this.#timeouts.add('timedOut');
  }

  /** The server closed a connection for `reason` (GOAWAY on HTTP/2). */
  connectionClosed(reason: ConnectionCloseReason, httpVersion: ClosedHttpVersion = 'h2'): void {
    this.#counters?.connectionClosed(reason, httpVersion);
    this.#closes.add(reason);
  }

  /** Writes the counts not yet logged; for close. */
  flush(): void {
    this.#timeouts.flush();
    this.#closes.flush();
  }
}

/**
 * The idle bound's count, one per connection on either transport: a connection that had no
 * stream open and opened none for more than DEADLINE_CHECKS_PER_BOUND checks in a row (the
 * whole bound, at most a quarter more) is idle. PINGs are not activity: only streams count.
 *
 * @example
 * ```ts
 * const idle = new IdleCount();
 * idle.streamOpened();
 * idle.expired(0); // false: a stream was opened since the last check
 * ```
 * @internal
 */
export class IdleCount {
  #opened = 0;
  #openedSeen = 0;
  #checks = 0;

  streamOpened(): void {
    this.#opened += 1;
  }

  /** One check, with `openStreams` open now: true once the connection has been idle for the whole bound. */
  expired(openStreams: number): boolean {
    const idle = openStreams === 0 && this.#opened === this.#openedSeen;
    this.#openedSeen = this.#opened;
    this.#checks = idle ? this.#checks + 1 : 0;
    return this.#checks > DEADLINE_CHECKS_PER_BOUND;
  }
}

/**
 * The message a call whose request timed out is answered with (grpc-message), the same on both transports.
 *
 * @example
 * ```ts
 * requestTimeoutMessage(10_000); // 'the request was not complete (END_STREAM) within 10000 ms (requestTimeoutMs)'
 * ```
 * @internal
 */
export function requestTimeoutMessage(requestTimeoutMs: number): string {
  return `the request was not complete (END_STREAM) within ${requestTimeoutMs} ms (requestTimeoutMs)`;
}
