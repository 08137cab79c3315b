/**
 * HTTP/1.1 on the own transport's gRPC port: node:http's parser, handed each connection the
 * sniff (./sniff.ts) or ALPN gave to HTTP/1.1, with the bounds of the HTTP/2 connections
 * (docs/http2-limits.md, "HTTP/1.1 on the same port"): the request head within
 * `maxHeaderListBytes` and the handshake deadline, the whole request within
 * `requestTimeoutMs`, an idle keep-alive connection closed after `maxConnectionIdleMs`, a
 * connection past `maxConnectionAgeMs` closed after its next answer, `maxConcurrentStreams`
 * requests unanswered, the body one framed message. gRPC itself needs HTTP/2 and is refused 505.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { type ConnectionGuard, answerClientError } from '../../base/connection-guard.js';
import { headDeadline } from '../../base/http-listen.js';
import { OpenSet } from '../../base/open-set.js';
import { type PeerDeadlineReport, requestTimeoutMessage } from '../../base/peer-deadlines.js';
import { callerOfSocket } from '../caller.js';
import { GrpcStatus } from '../../contracts/handler-api.js';
import type { ResolvedHttp2Options } from '../http2/options.js';
import type { Router } from '../http2/router.js';
import type { ConnectionLimits } from '../http2/wire/connection.js';
import { HTTP1_MAX_PIPELINED_REQUESTS } from '../http2/defaults.js';
import type { Exchange } from '../protocols/exchange.js';
import { Http1Connection } from './connection.js';
import { Http1Exchange, answerHttpError, bodyPending, http1MaxBodyBytes } from './exchange.js';

/** What serves an HTTP/1.1 exchange (Connect, gRPC-Web). */
export type ExchangeHandler = (exchange: Exchange) => void;

/** What an {@link Http1Port} serves, and under which bounds. @internal */
export interface Http1PortSettings {
  readonly options: ResolvedHttp2Options;
  /** The port's guard: the connection already counts against its cap and its address's share. */
  readonly guard: ConnectionGuard;
  readonly report: PeerDeadlineReport;
  /** The methods served, to name an unknown one. */
  readonly router: Router;
  /** The HTTP/2 connections' memory ceilings and ledgers: an HTTP/1.1 request is charged to the same. */
  readonly memory: ConnectionLimits;
  /** Serves Connect and gRPC-Web exchanges; undefined: each request is refused, naming what the port serves. */
  readonly serve?: ExchangeHandler | undefined;
}

/** `application/grpc` and its `+codec` and `;parameter` forms; not `application/grpc-web`. */
const GRPC_CONTENT_TYPE = /^application\/grpc(?:[+;]|$)/i;

/** The answer to a request refused at a memory ceiling, as HTTP/2 refuses its stream (REFUSED_STREAM): retry, later or elsewhere. */
const MEMORY_CEILING =
  "the server holds as much request memory as it allows (maxConnectionMemoryMb, maxProcessStreamMemoryMb, or this address's share of it: peerSharePercent); retry";

/** The answer to a request no protocol on HTTP/1.1 takes. */
const NOT_SERVED =
  'this port serves gRPC over HTTP/2 (h2, or h2c with prior knowledge); over HTTP/1.1 it serves no protocol for this request';

/**
 * The HTTP/1.1 side of one gRPC port. Owns a node:http server that never listens: the
 * gRPC server's listener hands it the connections that speak HTTP/1.1.
 *
 * @example
 * ```ts
 * const http1 = new Http1Port({ options, guard, report, router });
 * sniffProtocol(socket, guard.remainingMs(socket), (sniffed) => {
 *   if (sniffed === 'http/1.1') http1.serve(socket);
 * });
 * await http1.close(10_000);
 * ```
 * @internal
 */
export class Http1Port {
  readonly #settings: Http1PortSettings;
  readonly #server: Server;
  readonly #maxBodyBytes: number;
  readonly #connections = new OpenSet<Http1Connection>();
  readonly #bySocket = new WeakMap<Socket, Http1Connection>();
  /** The exchange whose request is being read, per connection: what the request deadline interrupts. */
  readonly #reading = new WeakMap<Http1Connection, Http1Exchange>();
  #closing = false;
  /** node:http's timeout checks run: from the first connection served, until close. */
  #checking = false;

  constructor(settings: Http1PortSettings) {
    const { options } = settings;
    this.#settings = settings;
    this.#maxBodyBytes = http1MaxBodyBytes(options.maxReceiveMessageBytes);
    this.#server = createServer(
      {
        maxHeaderSize: options.maxHeaderListBytes,
        ...headDeadline(options.handshakeTimeoutMs, options.requestTimeoutMs),
        // An idle keep-alive connection is an HTTP/2 connection without a stream: one idle bound for both.
        keepAliveTimeout: options.maxConnectionIdleMs,
      },
      (request, response) => this.#onRequest(request, response),
    );
    this.#server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.#onClientError(err, socket));
    this.#server.on('timeout', (socket: Socket) => this.#onIdle(socket));
    // A connection with no request in flight may make room at the port's cap, as an HTTP/2 one with no stream.
    settings.guard.trackRequests(this.#server);
  }

  /** Serves `socket` as HTTP/1.1: the sniff left it paused with what it read pushed back. */
  serve(socket: Socket): void {
    const connection = new Http1Connection(socket, {
      memory: this.#settings.memory,
      maxInFlight: Math.min(this.#settings.options.maxConcurrentStreams, HTTP1_MAX_PIPELINED_REQUESTS),
      maxAgeMs: this.#settings.options.maxConnectionAgeMs,
      maxStallMs: this.#settings.options.maxFlowControlStallMs,
      guard: this.#settings.guard,
      report: this.#settings.report,
    });
    this.#connections.add(connection);
    this.#bySocket.set(socket, connection);
    socket.once('close', () => this.#connections.delete(connection));
    if (!this.#checking) {
      // node:http starts checking headersTimeout and requestTimeout when its server emits
      // 'listening'; this one never listens (the gRPC server's listener hands it connections).
      this.#checking = true;
      this.#server.emit('listening');
    }
    this.#server.emit('connection', socket);
    socket.resume();
    if (this.#closing) connection.close();
  }

  /** Ends idle connections now and busy ones after their answers; destroys what is left after `graceMs`. */
  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    for (const connection of this.#connections) connection.close();
    const force = setTimeout(() => {
      for (const connection of this.#connections) connection.socket.destroy();
    }, graceMs);
    await this.#connections.closed();
    clearTimeout(force);
    // Stops node:http's timeout checks; it never listened, so its callback's error says only that.
    if (this.#checking) this.#server.close(() => undefined);
  }

  #onRequest(request: IncomingMessage, response: ServerResponse): void {
    const connection = this.#bySocket.get(request.socket);
    if (connection === undefined) return;
    const started = connection.requestStarted(request, response);
    if (started === 'closed') return;
    if (started === 'refused') {
      answerHttpError(response, 503, 'unavailable', MEMORY_CEILING, bodyPending(request));
      return;
    }
    if (GRPC_CONTENT_TYPE.test(request.headers['content-type'] ?? '')) {
      const message = 'gRPC needs HTTP/2 (h2, or h2c with prior knowledge); this request came over HTTP/1.1';
      answerHttpError(response, 505, 'unimplemented', message, bodyPending(request));
      return;
    }
    const serve = this.#settings.serve;
    if (serve === undefined) {
      this.#refuse(request, response);
      return;
    }
    const limits = { maxBodyBytes: this.#maxBodyBytes, charge: (bytes: number) => connection.charge(bytes) };
    const exchange = new Http1Exchange(request, response, limits, () => callerOfSocket(request.socket));
    if (bodyPending(request)) {
      this.#reading.set(connection, exchange);
      // 'end' comes once: `on` spares the wrapper `once` builds per request.
      request.on('end', () => this.#reading.delete(connection));
    }
    try {
      serve(exchange);
    } catch (err) {
      // A protocol answers its own errors; one that throws must not take the process down.
      this.#settings.options.logger.error('an HTTP/1.1 request failed', { error: err instanceof Error ? err.message : String(err) });
      answerHttpError(response, 500, 'internal', 'the server failed to serve this request', true);
    }
  }

  /**
   * No protocol serves HTTP/1.1 requests: 404 for a method not served, 415 for one that is,
   * each naming why; a body not read yet is not read on (the connection closes after the answer).
   */
  #refuse(request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? '/').split('?', 1)[0];
    const router = this.#settings.router;
    const close = bodyPending(request);
    if (router.get(path) === undefined)
      answerHttpError(response, 404, 'unimplemented', `${router.unknownPathMessage(path)}; ${NOT_SERVED}`, close);
    else answerHttpError(response, 415, 'unimplemented', NOT_SERVED, close);
  }

  /**
   * node:http could not read a request: a head or a whole request past its deadline
   * (counted as a request timed out; the first head's deadline is the connection's own,
   * counted as a failed handshake), or a malformed or oversized head; answered as node:http would.
   */
  #onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    const connection = this.#bySocket.get(socket);
    // Closed already (its first head's own deadline, a stall): node:http's check came after.
    if (socket.destroyed) return;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      if (connection?.started !== true) this.#settings.guard.failed('timeout');
      else {
        this.#settings.report.requestTimedOut();
        const message = requestTimeoutMessage(this.#settings.options.requestTimeoutMs);
        this.#reading.get(connection)?.interrupt(GrpcStatus.DEADLINE_EXCEEDED, message);
      }
    }
    answerClientError(err, socket);
  }

  /** node:http's keep-alive timeout: the connection has had no request for the idle bound. */
  #onIdle(socket: Socket): void {
    this.#settings.report.connectionClosed('idle', 'http/1.1');
    socket.destroy();
  }
}
