/**
 * One client connection: keepalive pings and their enforcement (gRFC A8 (https://github.com/grpc/proposal/blob/master/A8-client-side-keepalive.md)), maximum age
 * and idle time (A9 (https://github.com/grpc/proposal/blob/master/A9-server-side-connection-management.md)), the request deadline of its calls
 * (../../peer-deadlines.ts), graceful close with two GOAWAYs, and forced close.
 */
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import { callerOfSocket } from '../caller.js';
import { type ConnectionGuard, type HandshakeFailure, peerKey } from '../../base/connection-guard.js';
import { DEADLINE_CHECKS_PER_BOUND, IdleCount, type PeerDeadlineReport } from '../../base/peer-deadlines.js';
import type { CallerIdentity } from '../../contracts/handler-api.js';
import type { CallSession, SessionCall } from './call.js';
import { GOAWAY_PING_TIMEOUT_MS, KEEPALIVE_WITHOUT_CALLS_PERMIT_TIME_MS, MAX_CONNECTION_AGE_JITTER } from './defaults.js';
import type { ResolvedHttp2Options } from './options.js';
import { type ConnectionEvents, type ConnectionLimits, H2Connection } from './wire/connection.js';
import { H2_ERROR } from './wire/frames.js';
import type { H2Stream, RequestHeaders } from './wire/stream.js';

/** The largest stream identifier: a first GOAWAY naming it refuses nothing the client already sent. */
const MAX_STREAM_ID = 2 ** 31 - 1;

/** What a connection does with a new request stream. */
export type StreamHandler = (stream: H2Stream, headers: RequestHeaders, fields: readonly string[], session: SessionState) => void;

function onKeepalive(state: SessionState): void {
  state.sendKeepalive();
}
function onKeepaliveTimeout(state: SessionState): void {
  state.forceClose('keepalive ping not acknowledged');
}
function onMaxAge(state: SessionState): void {
  state.closeFor('age', 'max_age');
}
function onIdleCheck(state: SessionState): void {
  state.checkIdle();
}
function onRequestCheck(state: SessionState): void {
  state.checkRequests();
}

export class SessionState implements CallSession, ConnectionEvents {
  readonly calls = new Set<SessionCall>();
  /** The HTTP/2 connection (./wire) this state drives. */
  readonly #connection: H2Connection;
  readonly #options: ResolvedHttp2Options;
  readonly #onStream: StreamHandler;
  readonly #onClosed: (state: SessionState) => void;
  /** The server's port guard: what is left of the handshake deadline, and where a failed handshake is counted. */
  readonly #guard: ConnectionGuard;
  #peer: string | undefined = undefined;
  /** null: not read yet (most calls never ask). */
  #caller: CallerIdentity | undefined | null = null;
  #pingStrikes = 0;
  #lastValidPing = Number.NEGATIVE_INFINITY;
  #keepaliveTimer: NodeJS.Timeout | undefined = undefined;
  #ackTimer: NodeJS.Timeout | undefined = undefined;
  #ageTimer: NodeJS.Timeout | undefined = undefined;
  #graceTimer: NodeJS.Timeout | undefined = undefined;
  readonly #idleTimer: NodeJS.Timeout;
  readonly #idle = new IdleCount();
  /** The request deadline's check, armed while a call's request is not whole; its count of checks, the calls' clock. */
  #requestTimer: NodeJS.Timeout | undefined = undefined;
  #requestTick = 0;
  readonly #report: PeerDeadlineReport;
  #closing: Promise<void> | undefined = undefined;
  /** While a graceful close waits for its PING's ack: what sends the second GOAWAY. */
  #onLastCallClosed: (() => void) | undefined = undefined;
  /** The same, when the client sends GOAWAY or the connection closes. */
  #onPeerGone: (() => void) | undefined = undefined;

  constructor(
    socket: Socket,
    limits: ConnectionLimits,
    options: ResolvedHttp2Options,
    onStream: StreamHandler,
    onClosed: (state: SessionState) => void,
    guard: ConnectionGuard,
    report: PeerDeadlineReport,
  ) {
    this.#options = options;
    this.#report = report;
    this.#onStream = onStream;
    this.#onClosed = onClosed;
    this.#guard = guard;
    this.#connection = new H2Connection(socket, limits, this, guard.remainingMs(socket), peerKey(socket.remoteAddress));
    this.#keepaliveTimer = setTimeout(onKeepalive, options.keepaliveTimeMs, this).unref();
    const jitter = 1 + (Math.random() * 2 - 1) * MAX_CONNECTION_AGE_JITTER;
    this.#ageTimer = setTimeout(onMaxAge, Math.round(options.maxConnectionAgeMs * jitter), this).unref();
    this.#idleTimer = setTimeout(onIdleCheck, options.maxConnectionIdleMs / DEADLINE_CHECKS_PER_BOUND, this).unref();
  }

  // --- ConnectionEvents ---

  stream(stream: H2Stream, headers: RequestHeaders, fields: readonly string[]): void {
    this.#idle.streamOpened();
    if (this.calls.size === 0) this.#guard.busy(this.#connection.socket);
    this.#onStream(stream, headers, fields, this);
    // Answered at once (refused, unknown method): as idle as before.
    if (this.calls.size === 0) this.#markIdle();
  }

  /** No call in flight: at the port's cap this connection may make room for a new one (GOAWAY NO_ERROR, then closed). */
  #markIdle(): void {
    this.#guard.idle(this.#connection.socket, () => this.#evict());
  }

  #evict(): void {
    const connection = this.#connection;
    connection.destroy(H2_ERROR.NO_ERROR, 'evicted');
    // Now, not after the flush delay: the cap counts descriptors, and the GOAWAY was written already.
    connection.socket.destroy();
  }

  ping(): void {
    if (this.#options.maxPingStrikes > 0) this.clientPinged();
  }

  goaway(): void {
    this.#onPeerGone?.();
  }

  closed(): void {
    this.#onPeerGone?.();
    this.sessionClosed();
  }

  handshakeFailed(reason: HandshakeFailure): void {
    this.#guard.failed(reason);
  }

  internalError(err: unknown): void {
    this.#options.logger.error('closing a connection after an internal error', {
      peer: this.peer,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  get peer(): string {
    if (this.#peer === undefined) {
      const socket = this.#connection.socket;
      const address = socket.remoteAddress ?? 'unknown';
      this.#peer = address.includes(':') ? `[${address}]:${socket.remotePort}` : `${address}:${socket.remotePort}`;
    }
    return this.#peer;
  }

  get caller(): CallerIdentity | undefined {
    if (this.#caller === null) this.#caller = callerOfSocket(this.#connection.socket);
    return this.#caller;
  }

  /**
   * A call's request is not whole yet: the request deadline's check is armed, and the call
   * is told the check count it started at (its clock: no time is read per call).
   */
  requestStarted(): number {
    if (this.#requestTimer === undefined) {
      const period = this.#options.requestTimeoutMs / DEADLINE_CHECKS_PER_BOUND;
      this.#requestTimer = setTimeout(onRequestCheck, period, this).unref();
    }
    return this.#requestTick;
  }

  /**
   * The request deadline: a call whose request is still not whole more than
   * DEADLINE_CHECKS_PER_BOUND checks after it started (the whole bound, at most a quarter
   * more) is answered DEADLINE_EXCEEDED and its stream reset. The check stays armed while
   * such calls remain.
   */
  checkRequests(): void {
    const tick = ++this.#requestTick;
    let pending = false;
    for (const call of [...this.calls]) {
      if (!call.requestPending) continue;
      if (tick - call.requestTick <= DEADLINE_CHECKS_PER_BOUND) {
        pending = true;
        continue;
      }
      this.#report.requestTimedOut();
      call.requestTimedOut(this.#options.requestTimeoutMs);
    }
    if (pending && !this.#connection.destroyed) (this.#requestTimer as NodeJS.Timeout).refresh();
    else this.#requestTimer = undefined;
  }

  /** The idle bound (grpc-go's MaxConnectionIdle, {@link IdleCount}): GOAWAY NO_ERROR, then closed. */
  checkIdle(): void {
    if (this.#idle.expired(this.calls.size)) this.closeFor('idle', 'max_idle');
    else this.#idleTimer.refresh();
  }

  /** Closes the connection gracefully for one of the deadlines, counting it unless it was closing already. */
  closeFor(reason: 'idle' | 'age', debugData: string): void {
    const connection = this.#connection;
    if (this.#closing !== undefined || connection.closed || connection.destroyed) return;
    this.#report.connectionClosed(reason);
    void this.gracefulClose(debugData);
  }

  callClosed(call: SessionCall): void {
    this.calls.delete(call);
    if (this.calls.size > 0) return;
    this.#onLastCallClosed?.();
    this.#markIdle();
  }

  noteResponse(): void {
    this.#pingStrikes = 0;
    this.#lastValidPing = Number.NEGATIVE_INFINITY;
  }

  /**
   * gRFC A8's server enforcement: a ping sooner than the permitted interval after the last
   * valid one is a strike (the interval is 2 hours while no call is in flight, unless
   * permitted); one strike more than `maxPingStrikes` closes the connection with GOAWAY
   * ENHANCE_YOUR_CALM "too_many_pings". Sending response headers or DATA forgives
   * (`noteResponse`).
   */
  clientPinged(): void {
    // PINGs also measure bandwidth (grpc-go sends one as DATA arrives): a ping while a
    // response is being sent is welcome, as gRFC A8 asks servers to allow.
    for (const call of this.calls) {
      if (call.responding) {
        this.noteResponse();
        return;
      }
    }
    const options = this.#options;
    const now = performance.now();
    const interval =
      this.calls.size === 0 && !options.keepalivePermitWithoutCalls
        ? KEEPALIVE_WITHOUT_CALLS_PERMIT_TIME_MS
        : options.keepalivePermitTimeMs;
    if (now - this.#lastValidPing >= interval) {
      this.#lastValidPing = now;
      return;
    }
    if (++this.#pingStrikes <= options.maxPingStrikes) return;
    const connection = this.#connection;
    if (connection.destroyed) return;
    options.logger.warn('closing a connection that pings too often', { peer: this.peer, strikes: this.#pingStrikes });
    this.#cancelCalls('the connection was closed: too many pings');
    connection.destroy(H2_ERROR.ENHANCE_YOUR_CALM, 'too_many_pings');
  }

  /** Keepalive: ping, and close the connection when no ack comes within keepaliveTimeoutMs. */
  sendKeepalive(): void {
    this.#keepaliveTimer = undefined;
    const connection = this.#connection;
    if (connection.destroyed || connection.closed) return;
    this.#ackTimer = setTimeout(onKeepaliveTimeout, this.#options.keepaliveTimeoutMs, this).unref();
    const sent = connection.ping((err) => {
      clearTimeout(this.#ackTimer);
      this.#ackTimer = undefined;
      if (err === null && !connection.destroyed) {
        this.#keepaliveTimer = setTimeout(onKeepalive, this.#options.keepaliveTimeMs, this).unref();
      }
    });
    // Too many pings outstanding: the ack timer decides.
    if (!sent) this.#options.logger.warn('keepalive ping not sent', { peer: this.peer });
  }

  /**
   * Graceful close (gRFC A9, RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §6.8): a first GOAWAY naming the largest stream id,
   * so streams the client already sent are still served; after a PING round trip (or
   * GOAWAY_PING_TIMEOUT_MS) a second GOAWAY names the last stream accepted, and the
   * connection closes once its calls are done. A connection without calls gets the
   * second GOAWAY at once, and so does one whose last call ends before the ack: a client
   * that received GOAWAY and has no stream open may stop reading (nghttp2-based ones do,
   * `nghttp2_session_want_read`), so that PING's ack may never come and the close would
   * only wait out the timeout; a call the client sends meanwhile is above the second
   * GOAWAY's last stream id, which tells the client it was not processed (a gRPC client
   * retries it).
   * Calls still running `graceMs` after the second GOAWAY are cancelled. Resolves once
   * the second GOAWAY is sent.
   */
  gracefulClose(debugData: string, graceMs: number = this.#options.maxConnectionAgeGraceMs): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    const connection = this.#connection;
    this.#closing = new Promise<void>((resolve) => {
      if (connection.destroyed || connection.closed) {
        resolve();
        return;
      }
      connection.goaway(H2_ERROR.NO_ERROR, MAX_STREAM_ID, debugData);
      let secondSent = false;
      const second = (): void => {
        if (secondSent) return;
        secondSent = true;
        this.#onLastCallClosed = undefined;
        this.#onPeerGone = undefined;
        clearTimeout(pingTimer);
        resolve();
        if (connection.destroyed) return;
        connection.close();
        if (Number.isFinite(graceMs)) {
          this.#graceTimer = setTimeout(() => this.forceClose('the server closed the connection'), graceMs).unref();
        }
      };
      const pingTimer = setTimeout(second, GOAWAY_PING_TIMEOUT_MS).unref();
      // A client that is itself going away (its GOAWAY, or the connection closing) will not
      // answer the PING: no reason to wait for it.
      this.#onPeerGone = second;
      this.#onLastCallClosed = second;
      if (this.calls.size === 0 || !connection.ping(second)) second();
    });
    return this.#closing;
  }

  /** Cancels every call in flight (RST_STREAM CANCEL) and closes the connection now. */
  forceClose(reason: string): void {
    const connection = this.#connection;
    if (connection.destroyed) return;
    this.#cancelCalls(reason);
    // The RST_STREAM frames just queued reach the client before the socket ends, so it
    // sees each call CANCELLED; a peer that reads nothing (a dead one: unacked keepalive)
    // has its socket destroyed shortly after.
    connection.destroy();
  }

  #cancelCalls(reason: string): void {
    for (const call of [...this.calls]) call.cancelByServer(reason);
  }

  sessionClosed(): void {
    clearTimeout(this.#keepaliveTimer);
    clearTimeout(this.#ackTimer);
    clearTimeout(this.#ageTimer);
    clearTimeout(this.#graceTimer);
    clearTimeout(this.#idleTimer);
    clearTimeout(this.#requestTimer);
    this.#onClosed(this);
  }
}
