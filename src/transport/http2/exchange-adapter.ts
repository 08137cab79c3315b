/**
 * An HTTP/2 stream as an {@link Exchange}: what the Connect and gRPC-Web calls
 * (../protocols/) run on. The connection sees it as one of its calls (SessionCall): the
 * request deadline, the memory ceiling, flow control and a forced close hold for it as for
 * a gRPC call.
 */
import { Buffer } from 'node:buffer';
import { requestTimeoutMessage } from '../../base/peer-deadlines.js';
import { GrpcStatus } from '../../contracts/handler-api.js';
import type { Exchange, ExchangeFields, ExchangeListener, ExchangePeer } from '../protocols/exchange.js';
import type { CallSession, SessionCall } from './call.js';
import { H2_ERROR } from './wire/frames.js';
import type { H2Stream, RequestHeaders, ResponseFields, StreamListener } from './wire/stream.js';

/** The request's regular fields by name, a repeated one's values joined with ", " (RFC 9110 section 5.3). */
function headerMap(fields: readonly string[]): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.charCodeAt(0) === 58 /* ':' */) continue;
    const value = fields[i + 1] as string;
    const earlier = headers[name];
    headers[name] = earlier === undefined ? value : `${earlier}, ${value}`;
  }
  return headers;
}

/** What came before the call took the exchange: copies of the body chunks, and the end. */
interface Early {
  readonly chunks: Buffer[];
  ended: boolean;
  closed: boolean;
}

/**
 * One HTTP/2 stream carrying a Connect or gRPC-Web call.
 *
 * @example
 * ```ts
 * // hidden: declare const stream: H2Stream, headers: RequestHeaders, fields: readonly string[], session: CallSession;
 * const exchange = new H2Exchange(stream, headers, fields, session);
 * exchange.respond(404, {}, true);
 * ```
 */
export class H2Exchange implements Exchange, StreamListener, SessionCall {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawHeaders: readonly string[];
  readonly peer: ExchangePeer;
  requestTick = 0;
  readonly #stream: H2Stream;
  readonly #session: CallSession;
  #listener: ExchangeListener | undefined = undefined;
  #early: Early | undefined = { chunks: [], ended: false, closed: false };
  #responded = false;
  #ended = false;

  constructor(stream: H2Stream, headers: RequestHeaders, fields: readonly string[], session: CallSession) {
    this.#stream = stream;
    this.#session = session;
    this.method = headers[':method'] ?? '';
    const target = headers[':path'] ?? '';
    const question = target.indexOf('?');
    this.path = question < 0 ? target : target.slice(0, question);
    this.query = question < 0 ? '' : target.slice(question + 1);
    this.headers = headerMap(fields);
    this.rawHeaders = fields;
    this.peer = {
      get address() {
        return session.peer;
      },
      get caller() {
        return session.caller;
      },
      httpVersion: 'h2',
    };
    stream.listener = this;
    session.calls.add(this);
    if (!stream.recvClosed) this.requestTick = session.requestStarted();
  }

  // --- Exchange ---

  get requestEnded(): boolean {
    return this.#stream.recvClosed;
  }

  get closed(): boolean {
    return this.#stream.closed;
  }

  listen(listener: ExchangeListener): void {
    const early = this.#early;
    this.#listener = listener;
    this.#early = undefined;
    if (early === undefined) return;
    for (const chunk of early.chunks) listener.data(chunk);
    if (early.ended) listener.end();
    if (early.closed) listener.closed();
  }

  pause(): void {
    this.#stream.pause();
  }

  resume(): void {
    this.#stream.resume();
  }

  release(): void {
    this.#stream.release();
  }

  respond(status: number, headers: ExchangeFields, endStream = false): void {
    this.#responded = true;
    if (endStream) this.#ended = true;
    this.#stream.respond({ ':status': status, ...(headers as ResponseFields) }, endStream);
    this.#session.noteResponse();
  }

  respondWhole(status: number, headers: ExchangeFields, body: Buffer): void {
    this.respond(status, headers);
    this.write(body);
    this.end();
  }

  write(chunk: Buffer, second?: Buffer): boolean {
    this.#session.noteResponse();
    return this.#stream.write(chunk, second);
  }

  end(trailers: ExchangeFields = {}): void {
    this.#ended = true;
    this.#stream.end(trailers as ResponseFields);
  }

  abort(): void {
    this.#stream.reset(H2_ERROR.CANCEL);
  }

  // --- StreamListener ---

  data(chunk: Buffer): void {
    const listener = this.#listener;
    if (listener !== undefined) listener.data(chunk);
    // The chunk is a view of the read buffer: what waits for the call is copied.
    else this.#early?.chunks.push(Buffer.from(chunk));
  }

  inputEnd(): void {
    const listener = this.#listener;
    if (listener !== undefined) listener.end();
    else if (this.#early !== undefined) this.#early.ended = true;
  }

  drained(): void {
    this.#listener?.drained();
  }

  streamClosed(): void {
    this.#session.callClosed(this);
    const listener = this.#listener;
    if (listener !== undefined) listener.closed();
    else if (this.#early !== undefined) this.#early.closed = true;
  }

  // --- SessionCall ---

  get requestPending(): boolean {
    return !this.#ended && !this.#stream.recvClosed;
  }

  get responding(): boolean {
    return this.#responded && !this.#stream.closed;
  }

  requestTimedOut(requestTimeoutMs: number): void {
    const listener = this.#listener;
    if (listener !== undefined) listener.interrupted(GrpcStatus.DEADLINE_EXCEEDED, requestTimeoutMessage(requestTimeoutMs), true);
    // Nothing answered it (or the answer is out and the client still sends): the stream goes.
    if (!this.#ended) this.#stream.reset(H2_ERROR.CANCEL);
  }

  cancelByServer(details: string): void {
    this.#listener?.interrupted(GrpcStatus.UNAVAILABLE, details, false);
    this.#stream.reset(H2_ERROR.CANCEL);
  }
}
