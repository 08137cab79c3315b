/**
 * The request deadline and the idle bound (src/base/peer-deadlines.ts) on a
 * @grpc/grpc-js server, whose node:http2 sessions this reaches the way grpc-js-memory.ts does
 * (its private `createHttp2Server`). grpc-js has neither a request deadline (a stream opened
 * and never finished is held until the client goes) nor a way to count what its own
 * `grpc.max_connection_idle_ms` closes, so both are here; its age bound
 * (`grpc.max_connection_age_ms`, channel-options.ts) is its own, counted here as it sends its
 * GOAWAY "max_age".
 *
 * Per session, one timer each, never one per stream: the request check runs
 * DEADLINE_CHECKS_PER_BOUND times per requestTimeoutMs while a stream's request is not whole
 * (nghttp2 has not seen its END_STREAM), and answers such a stream DEADLINE_EXCEEDED
 * (Trailers-Only, or RST_STREAM CANCEL when grpc-js already sent its headers) once the bound
 * has passed; the idle check closes a session with no open stream for the idle bound
 * (GOAWAY NO_ERROR "max_idle", then a graceful close). PINGs are not activity.
 */
import { Buffer } from 'node:buffer';
import type { Http2Server, Http2Session, ServerHttp2Stream } from 'node:http2';
import type { Server } from '@grpc/grpc-js';
import { nodeHttp2 } from '../base/optional-deps.js';
import { DEADLINE_CHECKS_PER_BOUND, IdleCount, type PeerDeadlineReport, requestTimeoutMessage } from '../base/peer-deadlines.js';
import { GrpcStatus } from '../contracts/handler-api.js';

/** grpc-js's debug data on the GOAWAY of its age bound (grpc-js server.ts, kMaxAge). */
const MAX_AGE_DEBUG_DATA = 'max_age';

/** One session's streams and its two checks. */
class SessionDeadlines {
  readonly #session: Http2Session;
  readonly #report: PeerDeadlineReport;
  /** Open streams, each with the request check count it started at (its clock). */
  readonly #streams = new Map<ServerHttp2Stream, number>();
  /** Streams whose END_STREAM has not been seen, a subset of #streams. */
  readonly #pending = new Set<ServerHttp2Stream>();
  #requestTimer: NodeJS.Timeout | undefined = undefined;
  #requestTick = 0;
  readonly #idleTimer: NodeJS.Timeout;
  readonly #idle = new IdleCount();
  #lastStreamId = 0;
  #closing = false;

  constructor(session: Http2Session, report: PeerDeadlineReport) {
    this.#session = session;
    this.#report = report;
    const period = report.settings.maxConnectionIdleMs / DEADLINE_CHECKS_PER_BOUND;
    this.#idleTimer = setTimeout(() => this.#checkIdle(), period).unref();
    session.on('stream', (stream: ServerHttp2Stream, _headers: unknown, flags: number) => this.#opened(stream, flags));
    session.once('close', () => {
      clearTimeout(this.#idleTimer);
      clearTimeout(this.#requestTimer);
    });
    this.#countAgeGoaway();
  }

  #opened(stream: ServerHttp2Stream, flags: number): void {
    this.#idle.streamOpened();
    this.#lastStreamId = Math.max(this.#lastStreamId, stream.id ?? 0);
    if (stream.closed) return;
    this.#streams.set(stream, this.#requestTick);
    stream.once('close', () => {
      this.#streams.delete(stream);
      this.#pending.delete(stream);
    });
    if ((flags & nodeHttp2().constants.NGHTTP2_FLAG_END_STREAM) !== 0) return;
    this.#pending.add(stream);
    if (this.#requestTimer === undefined) {
      const period = this.#report.settings.requestTimeoutMs / DEADLINE_CHECKS_PER_BOUND;
      this.#requestTimer = setTimeout(() => this.#checkRequests(), period).unref();
    }
  }

  #checkRequests(): void {
    const tick = ++this.#requestTick;
    for (const stream of [...this.#pending]) {
      // nghttp2's view: the client's END_STREAM arrived (whether or not grpc-js has read it);
      // or the stream is closing already (its 'close' not yet emitted): nothing to answer.
      if (stream.destroyed || stream.closed || stream.state?.remoteClose === 1) {
        this.#pending.delete(stream);
        continue;
      }
      if (tick - (this.#streams.get(stream) ?? tick) <= DEADLINE_CHECKS_PER_BOUND) continue;
      this.#pending.delete(stream);
      this.#report.requestTimedOut();
      this.#timeOut(stream);
    }
    if (this.#pending.size > 0 && !this.#session.destroyed) (this.#requestTimer as NodeJS.Timeout).refresh();
    else this.#requestTimer = undefined;
  }

  /** Answers DEADLINE_EXCEEDED (or, after grpc-js's headers, cancels) and resets the stream, which grpc-js sees as a cancelled call. */
  #timeOut(stream: ServerHttp2Stream): void {
    const { NGHTTP2_NO_ERROR, NGHTTP2_CANCEL } = nodeHttp2().constants;
    if (stream.headersSent) {
      stream.close(NGHTTP2_CANCEL);
      return;
    }
    const message = encodeURIComponent(requestTimeoutMessage(this.#report.settings.requestTimeoutMs));
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(GrpcStatus.DEADLINE_EXCEEDED), 'grpc-message': message },
      { endStream: true },
    );
    // The protocol document's early server closure: the client is still sending. node:http2
    // sends the RST_STREAM once the Trailers-Only headers are out.
    stream.close(NGHTTP2_NO_ERROR);
  }

  #checkIdle(): void {
    if (!this.#idle.expired(this.#streams.size)) {
      this.#idleTimer.refresh();
      return;
    }
    const session = this.#session;
    if (session.closed || session.destroyed || this.#closing) return;
    this.#closing = true;
    this.#report.connectionClosed('idle');
    session.goaway(nodeHttp2().constants.NGHTTP2_NO_ERROR, this.#lastStreamId, Buffer.from('max_idle'));
    session.close();
  }

  /** grpc-js sends its age GOAWAY on the session itself: counted as it goes out. */
  #countAgeGoaway(): void {
    const session = this.#session;
    const goaway = session.goaway;
    session.goaway = (code?: number, lastStreamID?: number, opaqueData?: NodeJS.ArrayBufferView): void => {
      if (
        !this.#closing &&
        opaqueData !== undefined &&
        Buffer.from(opaqueData.buffer, opaqueData.byteOffset, opaqueData.byteLength).toString() === MAX_AGE_DEBUG_DATA
      ) {
        this.#closing = true;
        this.#report.connectionClosed('age');
      }
      goaway.call(session, code, lastStreamID, opaqueData);
    };
  }
}

/**
 * Puts the request deadline and the idle bound on every node:http2 server `server` makes
 * from now on (call it before bindAsync), and counts its age closes. Returns false,
 * changing nothing, on a grpc-js without the private `createHttp2Server`.
 *
 * @example
 * ```ts
 * const report = new PeerDeadlineReport(logger, undefined, { requestTimeoutMs: 10_000, maxConnectionIdleMs: 60_000, maxConnectionAgeMs: 1_800_000 });
 * if (!guardGrpcJsDeadlines(server, report)) throw new Error('cannot apply the deadlines');
 * ```
 * @internal
 */
export function guardGrpcJsDeadlines(server: Server, report: PeerDeadlineReport): boolean {
  const internal = server as unknown as { createHttp2Server?: (...args: unknown[]) => Http2Server };
  const create = internal.createHttp2Server;
  if (typeof create !== 'function') return false;
  internal.createHttp2Server = function (this: unknown, ...args: unknown[]): Http2Server {
    // Every argument passed on: the other guards wrap the same method.
    const http2Server = create.apply(this, args);
    http2Server.on('session', (session: Http2Session) => new SessionDeadlines(session, report));
    return http2Server;
  };
  return true;
}
