/**
 * node:http's request and response as a protocol-independent {@link Exchange}
 * (../protocols/exchange.ts): what Connect and gRPC-Web need of HTTP/1.1. The body is
 * bounded here, as the HTTP/2 connection bounds what a stream holds: body bytes the
 * protocol holds, not yet released as whole messages, past {@link http1MaxBodyBytes} are
 * refused 413 before the rest is read, and the connection closed.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { GrpcStatus, type CallerIdentity, type StatusCode } from '../../contracts/handler-api.js';
import { HTTP1_MESSAGE_PREFIX_BYTES } from '../http2/defaults.js';
import type { Exchange, ExchangeFields, ExchangeListener, ExchangePeer } from '../protocols/exchange.js';

/**
 * The largest HTTP/1.1 request body a server with `maxReceiveMessageBytes` reads: one
 * message with gRPC-Web's prefix, base64-encoded (application/grpc-web-text).
 *
 * @example
 * ```ts
 * http1MaxBodyBytes(4 * 1024 * 1024); // 5592412
 * ```
 */
export function http1MaxBodyBytes(maxReceiveMessageBytes: number): number {
  return Math.ceil((maxReceiveMessageBytes + HTTP1_MESSAGE_PREFIX_BYTES) / 3) * 4;
}

/**
 * A Connect-style error answer (https://connectrpc.com/docs/protocol/#error-end-stream):
 * a JSON body naming the code and the problem, which Connect clients read whatever the
 * HTTP status; the connection is closed after it when `close`.
 */
export function answerHttpError(response: ServerResponse, status: number, code: string, message: string, close = false): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = JSON.stringify({ code, message });
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (close) headers.connection = 'close';
  response.writeHead(status, headers);
  response.end(body);
}

/** The 413 of a body past the limit: Connect's `resource_exhausted`, naming the limit and the option. */
export function bodyTooLarge(response: ServerResponse, maxBodyBytes: number): void {
  answerHttpError(
    response,
    413,
    'resource_exhausted',
    `the request body is larger than ${maxBodyBytes} bytes (one message of maxReceiveMessageBytes, framed)`,
    true,
  );
}

/**
 * Whether `request` has body bytes not yet read: node:http emits a request at the end of
 * its head, before it marks even an empty body `complete`. @internal
 */
export function bodyPending(request: IncomingMessage): boolean {
  if (request.complete) return false;
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Who sent `request`: address, verified client certificate (read once per call), HTTP/1.1.
 * The address is written when first read: most calls never ask.
 */
function peerOf(request: IncomingMessage, caller: () => CallerIdentity | undefined): ExchangePeer {
  let address: string | undefined;
  return {
    get address() {
      if (address === undefined) {
        const socket = request.socket;
        const ip = socket.remoteAddress ?? 'unknown';
        address = ip.includes(':') ? `[${ip}]:${socket.remotePort}` : `${ip}:${socket.remotePort}`;
      }
      return address;
    },
    get caller() {
      return caller();
    },
    httpVersion: 'http/1.1',
  };
}

/**
 * node:http's headers as the exchange's: a repeated header's values joined with ", ". node:http
 * joins them itself, except `set-cookie` (an array, RFC 6265 section 3): only then is a copy made.
 */
function joinedHeaders(request: IncomingMessage): Readonly<Record<string, string | undefined>> {
  const headers = request.headers;
  if (headers['set-cookie'] === undefined) return headers as Readonly<Record<string, string | undefined>>;
  const joined: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) joined[name] = Array.isArray(value) ? value.join(', ') : value;
  return joined;
}

/** One HTTP/1.1 request and its response as an {@link Exchange}. @internal */
export class Http1Exchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly peer: ExchangePeer;
  readonly #request: IncomingMessage;
  readonly #response: ServerResponse;
  readonly #maxBodyBytes: number;
  /** Charges body bytes to the connection's memory ceilings (negative: releases them). */
  readonly #charge: (bytes: number) => void;
  #listener: ExchangeListener | undefined = undefined;
  /** Body bytes the protocol holds (not yet released as whole messages), charged to the memory ceilings. */
  #unreleased = 0;
  #closed = false;
  #rawHeaders: readonly string[] | undefined = undefined;

  constructor(
    request: IncomingMessage,
    response: ServerResponse,
    limits: { readonly maxBodyBytes: number; readonly charge: (bytes: number) => void },
    caller: () => CallerIdentity | undefined,
  ) {
    this.#request = request;
    this.#response = response;
    this.#maxBodyBytes = limits.maxBodyBytes;
    this.#charge = limits.charge;
    const url = request.url ?? '/';
    const question = url.indexOf('?');
    this.method = request.method ?? 'GET';
    this.path = question < 0 ? url : url.slice(0, question);
    this.query = question < 0 ? '' : url.slice(question + 1);
    this.headers = joinedHeaders(request);
    this.peer = peerOf(request, caller);
    // 'close' comes once: `on` spares the wrapper `once` builds per request.
    response.on('close', () => this.#onClose());
  }

  /** Lower-cased when first read: only a call that reads its metadata needs it. */
  get rawHeaders(): readonly string[] {
    this.#rawHeaders ??= this.#request.rawHeaders.map((field, i) => (i % 2 === 0 ? field.toLowerCase() : field));
    return this.#rawHeaders;
  }

  get requestEnded(): boolean {
    return this.#request.complete;
  }

  get closed(): boolean {
    return this.#closed;
  }

  listen(listener: ExchangeListener): void {
    this.#listener = listener;
    const request = this.#request;
    request.on('data', (chunk: Buffer) => this.#onData(chunk));
    request.on('end', () => listener.end());
    this.#response.on('drain', () => listener.drained());
  }

  pause(): void {
    this.#request.pause();
  }

  resume(): void {
    this.#request.resume();
  }

  /** The protocol took whole messages: what it held no longer counts (a client stream's body may carry many). */
  release(): void {
    this.#charge(-this.#unreleased);
    this.#unreleased = 0;
  }

  /**
   * An answer that starts before the request body is whole is an early one (Connect and
   * gRPC-Web read the whole request before they answer over HTTP/1.1): the rest of the body
   * is not read on, and the connection closes after the answer.
   */
  respond(status: number, headers: ExchangeFields, endStream = false): void {
    if (bodyPending(this.#request)) this.#response.setHeader('connection', 'close');
    this.#response.writeHead(status, headers as OutgoingHttpHeaders);
    if (endStream) this.#response.end();
  }

  respondWhole(status: number, headers: ExchangeFields, body: Buffer): void {
    this.respond(status, headers);
    this.#response.end(body);
  }

  write(chunk: Buffer, second?: Buffer): boolean {
    const taken = this.#response.write(chunk);
    return second === undefined ? taken : this.#response.write(second);
  }

  /** Ends the response; trailers are dropped: HTTP/1.1 carries them only in chunked encoding, which Connect and gRPC-Web do not need. */
  end(_trailers?: ExchangeFields): void {
    this.#response.end();
  }

  abort(): void {
    this.#response.destroy();
  }

  /** The request deadline passed (node:http's `requestTimeout`) or the server is closing: told before the socket closes. */
  interrupt(status: StatusCode, details: string): void {
    if (!this.#closed) this.#listener?.interrupted(status, details, false);
  }

  /**
   * A chunk goes to the protocol first, which releases the whole messages in it; what it
   * still holds past the bound is refused. One chunk is at most what a socket read gives (64 KiB).
   */
  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    this.#unreleased += chunk.length;
    this.#charge(chunk.length);
    this.#listener?.data(chunk);
    if (this.#unreleased > this.#maxBodyBytes && !this.#closed) {
      this.#request.pause();
      this.interrupt(GrpcStatus.RESOURCE_EXHAUSTED, 'the request body is too large');
      bodyTooLarge(this.#response, this.#maxBodyBytes);
    }
  }

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.release();
    this.#listener?.closed();
  }
}
