/**
 * One gRPC call on one HTTP/2 stream: the wire side of a call (request messages, response
 * headers, messages and trailers, deadlines, cancellation); what the call means to its
 * handler and interceptors is ../call-core.ts. Built for the unary path: no EventEmitter
 * (the call is its stream's listener), the AbortController and the metadata made only
 * when a handler reads them, the response message written once.
 */
import type { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../../base/errors.js';
import { CallCore, deserializeError } from '../call-core.js';
import { requestTimeoutMessage } from '../../base/peer-deadlines.js';
import {
  type CallerIdentity,
  type BidiStreamHandler,
  type ClientStreamHandler,
  GrpcStatusError,
  type CallMetadata,
  type ResponseCompression,
  type ResponseStream,
  type ServerStreamHandler,
  GrpcStatus,
  type StatusCode,
  type UnaryHandler,
} from '../../contracts/handler-api.js';
import { type MessageEncoding, clientAccepts, compress, decompress } from './compression.js';
import { MessageReader, SINGLE_BUFFER_MAX_BYTES, framedMessage, messagePrefix } from './framing.js';
import { type HeaderFields, addMetadataHeaders, metadataFromRawHeaders } from './metadata.js';
import type { DeadlineEntry, Deadlines } from './deadlines.js';
import type { ResolvedHttp2Options } from './options.js';
import { percentEncode } from './protocol.js';
import { RequestQueue } from './request-queue.js';
import type { Route } from './router.js';
import { H2_ERROR } from './wire/frames.js';
import type { H2Stream, RequestHeaders, StreamListener } from './wire/stream.js';

/**
 * What the connection asks of each call in flight on it: a gRPC call, or the exchange of
 * a Connect or gRPC-Web call (./exchange-adapter.ts).
 */
export interface SessionCall {
  /** The session's request check count when the call started (SessionState.requestStarted). */
  requestTick: number;
  /** The client has not finished sending its request, and the call has no status yet. */
  readonly requestPending: boolean;
  /** The response is on its way (headers sent, stream open). */
  readonly responding: boolean;
  /** The request was not whole within requestTimeoutMs: answered DEADLINE_EXCEEDED, its stream reset. */
  requestTimedOut(requestTimeoutMs: number): void;
  /** The server is closing: the call is cancelled. */
  cancelByServer(details: string): void;
}

/** What a call needs from its connection. */
export interface CallSession {
  /** Calls in flight on the connection (for keepalive enforcement and forced close); a call adds itself. */
  readonly calls: Set<SessionCall>;
  /** A call's stream closed: it leaves `calls`. */
  callClosed(call: SessionCall): void;
  /** `ip:port` of the client. */
  readonly peer: string;
  /** The verified client certificate's caller, read once per connection. */
  readonly caller: CallerIdentity | undefined;
  /** The server is sending HEADERS or DATA: client pings become welcome again (gRFC A8 (https://github.com/grpc/proposal/blob/master/A8-client-side-keepalive.md)). */
  noteResponse(): void;
  /** A call whose request is not whole yet is watched by the request deadline; returns the check count it starts at. */
  requestStarted(): number;
}

/** What every call of a server shares. */
export interface CallShared {
  readonly options: ResolvedHttp2Options;
  readonly deadlines: Deadlines;
}

const RESPONSE_HEADERS = Object.freeze({ ':status': 200, 'content-type': 'application/grpc' });
const RESPONSE_HEADERS_BY_ENCODING: Readonly<Record<'gzip' | 'deflate', Readonly<HeaderFields>>> = {
  gzip: Object.freeze({ ...RESPONSE_HEADERS, 'grpc-encoding': 'gzip' }),
  deflate: Object.freeze({ ...RESPONSE_HEADERS, 'grpc-encoding': 'deflate' }),
};
const OK_TRAILERS = Object.freeze({ 'grpc-status': '0' });
const RESOLVED = Promise.resolve();

export class Http2Call extends CallCore implements DeadlineEntry, StreamListener, SessionCall {
  readonly deadline: number;
  deadlineAt = 0;
  deadlineSlot = -1;
  /** The session's request check count when the call started (SessionState.requestStarted). */
  requestTick = 0;
  readonly #stream: H2Stream;
  readonly #route: Route;
  readonly #options: ResolvedHttp2Options;
  readonly #deadlines: Deadlines;
  readonly #session: CallSession;
  readonly #headers: RequestHeaders;
  readonly #rawHeaders: readonly string[];
  readonly #encoding: MessageEncoding;
  readonly #reader: MessageReader;
  #metadata: CallMetadata | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #abortReason: GrpcStatusError | undefined = undefined;
  /** Response headers sent (not Trailers-Only any more). */
  #headersSent = false;
  /** The status is decided: sent or being sent, or the call was cancelled. */
  #done = false;
  /** Encoding announced in the response headers, and the one the next message uses. */
  #announcedEncoding: MessageEncoding = 'identity';
  #messageEncoding: MessageEncoding = 'identity';
  /** The single request of a unary or server-streaming call, until it runs. */
  #request: Buffer | undefined = undefined;
  #queue: RequestQueue<unknown> | undefined = undefined;
  #drain: { promise: Promise<void>; resolve(): void; reject(err: unknown): void } | undefined = undefined;

  constructor(
    stream: H2Stream,
    route: Route,
    shared: CallShared,
    session: CallSession,
    headers: RequestHeaders,
    rawHeaders: readonly string[],
    encoding: MessageEncoding,
    timeoutMs: number,
  ) {
    super(route.path, shared.options);
    this.#stream = stream;
    this.#route = route;
    this.#options = shared.options;
    this.#deadlines = shared.deadlines;
    this.#session = session;
    this.#headers = headers;
    this.#rawHeaders = rawHeaders;
    this.#encoding = encoding;
    this.#reader = new MessageReader(shared.options.maxReceiveMessageBytes);
    this.deadline = timeoutMs === Number.POSITIVE_INFINITY ? timeoutMs : Date.now() + timeoutMs;
    if (timeoutMs !== Number.POSITIVE_INFINITY) shared.deadlines.add(this, timeoutMs);
  }

  /** Wires the call to its stream and starts it: interceptors, then (for streaming requests) the handler. */
  start(): void {
    const stream = this.#stream;
    stream.listener = this;
    this.#session.calls.add(this);
    if (!stream.recvClosed) this.requestTick = this.#session.requestStarted();
    const kind = this.#route.kind;
    if (kind === 'client-stream' || kind === 'bidi') this.#queue = new RequestQueue(stream);
    if (!this.startInterceptors()) return;
    if (this.#queue !== undefined) this.whenStarted(() => this.inCallContext(this.#runStreaming, undefined));
  }

  // --- CallContext ---

  get metadata(): CallMetadata {
    return (this.#metadata ??= metadataFromRawHeaders(this.#rawHeaders));
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  get peer(): string {
    return this.#session.peer;
  }

  get caller(): CallerIdentity | undefined {
    return this.#session.caller;
  }

  sendMetadata(metadata: CallMetadata): void {
    if (this.#headersSent || this.#done)
      throw new JwtGrpcError('ERR_SERVER_STATE', `sendMetadata: the response headers of ${this.method} were already sent`);
    const headers: HeaderFields = { ...this.#responseHeaders() };
    addMetadataHeaders(headers, metadata);
    this.#respondHeaders(headers);
  }

  setResponseCompression(encoding: ResponseCompression): void {
    if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'deflate') {
      throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `setResponseCompression: unknown encoding ${JSON.stringify(encoding)}`);
    }
    if (!this.#headersSent) {
      const accepted = clientAccepts(this.#headers['grpc-accept-encoding'], encoding);
      this.#announcedEncoding = accepted ? encoding : 'identity';
      this.#messageEncoding = this.#announcedEncoding;
    } else if (encoding === 'identity' || encoding === this.#announcedEncoding) {
      this.#messageEncoding = encoding;
    } else {
      throw new JwtGrpcError(
        'ERR_SERVER_STATE',
        `setResponseCompression: the response headers announced ${this.#announcedEncoding}; only it or identity may follow`,
      );
    }
  }

  // --- request side ---

  /** A DATA chunk from the client. */
  data(chunk: Buffer): void {
    if (this.#done) return;
    const reader = this.#reader;
    try {
      reader.push(chunk, this);
    } catch (err) {
      this.fail(err);
      return;
    }
    // The bytes of whole messages no longer count against the connection's memory ceiling.
    if (!reader.partial) this.#stream.release();
  }

  /** One whole request message (MessageReader's sink). */
  onMessage(compressed: boolean, bytes: Buffer): void {
    let payload = bytes;
    if (compressed) {
      const encoding = this.#encoding;
      if (encoding === 'identity') {
        throw new GrpcStatusError(GrpcStatus.INTERNAL, 'request message has the compressed flag set but the request has no grpc-encoding');
      }
      payload = decompress(encoding, bytes, this.#options.maxReceiveMessageBytes);
    }
    const queue = this.#queue;
    if (queue === undefined) {
      if (this.#request !== undefined) {
        throw new GrpcStatusError(GrpcStatus.UNIMPLEMENTED, `received a second request message for ${this.method}, which takes one`);
      }
      this.#request = payload;
      return;
    }
    let message: unknown;
    try {
      message = this.#route.definition.requestDeserialize(payload);
    } catch (err) {
      throw deserializeError(err, this.method);
    }
    queue.push(message);
  }

  /** The client half-closed. */
  inputEnd(): void {
    if (this.#done) return;
    if (this.#reader.partial) {
      this.fail(new GrpcStatusError(GrpcStatus.INTERNAL, 'the request ended inside a message'));
      return;
    }
    const queue = this.#queue;
    if (queue !== undefined) {
      queue.end();
      return;
    }
    const bytes = this.#request;
    if (bytes === undefined) {
      this.fail(new GrpcStatusError(GrpcStatus.UNIMPLEMENTED, `received no request message for ${this.method}, which takes one`));
      return;
    }
    this.#request = undefined;
    if (this.gate === undefined) this.inCallContext(this.#runSingleRequest, bytes);
    else this.whenStarted(() => this.inCallContext(this.#runSingleRequest, bytes));
  }

  // --- handlers (run through inCallContext: inside the call's trace context, when it has one) ---

  #runSingleRequest(bytes: Buffer): void {
    let request: unknown;
    try {
      request = this.#route.definition.requestDeserialize(bytes);
    } catch (err) {
      this.fail(deserializeError(err, this.method));
      return;
    }
    if (this.#route.kind === 'server-stream') {
      this.#runStreaming(request);
      return;
    }
    let result: unknown;
    try {
      result = (this.#route.handler as UnaryHandler<unknown, unknown>)(request, this);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.settle(result);
  }

  #runStreaming(request: unknown): void {
    const responses: ResponseStream<unknown> = { write: (message) => this.#write(message) };
    let result: unknown;
    try {
      switch (this.#route.kind) {
        case 'server-stream':
          result = (this.#route.handler as ServerStreamHandler<unknown, unknown>)(request, responses, this);
          break;
        case 'client-stream':
          result = (this.#route.handler as ClientStreamHandler<unknown, unknown>)(this.#queue as RequestQueue<unknown>, this);
          break;
        default:
          result = (this.#route.handler as BidiStreamHandler<unknown, unknown>)(this.#queue as RequestQueue<unknown>, responses, this);
      }
    } catch (err) {
      this.fail(err);
      return;
    }
    this.settle(result);
  }

  /** What the handler returned: the response of a unary or client-streaming call; the end of a streaming response. */
  protected respond(response: unknown): void {
    const kind = this.#route.kind;
    if (kind === 'unary' || kind === 'client-stream') this.#respondUnary(response);
    else this.#endOk();
  }

  // --- response side ---

  #responseHeaders(): Readonly<HeaderFields> {
    const encoding = this.#announcedEncoding;
    return encoding === 'identity' ? RESPONSE_HEADERS : RESPONSE_HEADERS_BY_ENCODING[encoding];
  }

  /** Sends the response headers (not Trailers-Only): the call will end with trailers. */
  #respondHeaders(headers: Readonly<HeaderFields>): void {
    const stream = this.#stream;
    this.#headersSent = true;
    stream.respond(headers, false);
    this.#session.noteResponse();
  }

  /**
   * True while the response is on its way (headers sent, stream open): the client may be
   * pinging to measure the bandwidth of the DATA it receives.
   */
  get responding(): boolean {
    return this.#headersSent && !this.#stream.closed;
  }

  /** Writes one response message; returns false when the stream's buffer is full. */
  #writeMessage(bytes: Buffer): boolean {
    this.#session.noteResponse();
    let compressed = false;
    const encoding = this.#messageEncoding;
    if (encoding !== 'identity') {
      bytes = compress(encoding, bytes);
      compressed = true;
    }
    const stream = this.#stream;
    if (bytes.length <= SINGLE_BUFFER_MAX_BYTES) return stream.write(framedMessage(compressed, bytes));
    // Large: prefix and body without copying the body.
    return stream.write(messagePrefix(compressed, bytes.length), bytes);
  }

  /** A stream already closed cannot take a response: the call was cancelled. */
  #streamGone(): boolean {
    if (!this.#stream.closed) return false;
    this.streamClosed();
    return true;
  }

  #respondUnary(response: unknown): void {
    if (this.#done || this.#streamGone()) return;
    let bytes: Buffer;
    try {
      bytes = this.#route.definition.responseSerialize(response);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.#done = true;
    if (!this.#headersSent) this.#respondHeaders(this.#responseHeaders());
    this.#writeMessage(bytes);
    this.#stream.end(this.#trailerFields(GrpcStatus.OK, ''));
    this.#statusDecided(GrpcStatus.OK, '');
  }

  #write(message: unknown): Promise<void> {
    if (this.#done) {
      return Promise.reject(this.#abortReason ?? new GrpcStatusError(GrpcStatus.FAILED_PRECONDITION, `${this.method}: the call has ended`));
    }
    if (this.#streamGone()) return Promise.reject(this.#abortReason);
    let bytes: Buffer;
    try {
      bytes = this.#route.definition.responseSerialize(message);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!this.#headersSent) this.#respondHeaders(this.#responseHeaders());
    if (this.#writeMessage(bytes)) return RESOLVED;
    if (this.#drain === undefined) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.#drain = { promise, resolve, reject };
    }
    return this.#drain.promise;
  }

  /** The stream's buffer emptied: writers waiting on backpressure go on. */
  drained(): void {
    const drain = this.#drain;
    this.#drain = undefined;
    drain?.resolve();
  }

  /** A streaming handler finished: OK. */
  #endOk(): void {
    if (this.#done || this.#streamGone()) return;
    this.endWithStatus(GrpcStatus.OK, '', undefined);
  }

  protected mayEnd(): boolean {
    return !this.#done && !this.#streamGone();
  }

  /** Sends the status: Trailers-Only when nothing was sent yet, else trailers after the last DATA. */
  protected endWithStatus(status: StatusCode, details: string, metadata: CallMetadata | undefined): void {
    this.#done = true;
    if (metadata !== undefined && metadata.size > 0) this.setTrailers(metadata);
    const stream = this.#stream;
    if (!this.#headersSent) {
      const headers: HeaderFields = {
        ...RESPONSE_HEADERS,
        ...this.#trailerFields(status, details),
      };
      this.#session.noteResponse();
      // A client still sending gets RST_STREAM NO_ERROR after the status (the protocol
      // document's early server closure), from the connection.
      stream.respond(headers, true);
    } else {
      stream.end(this.#trailerFields(status, details));
    }
    this.#statusDecided(status, details);
  }

  #trailerFields(status: StatusCode, details: string): Readonly<HeaderFields> {
    const trailers = this.trailers;
    if (status === GrpcStatus.OK && trailers === undefined) return OK_TRAILERS;
    const fields: HeaderFields = { 'grpc-status': String(status) };
    if (details.length > 0) fields['grpc-message'] = percentEncode(details);
    if (trailers !== undefined) {
      try {
        addMetadataHeaders(fields, trailers, 'trailers');
      } catch (err) {
        this.#options.logger.error(`${this.method}: trailers dropped`, { error: (err as Error).message });
      }
    }
    return fields;
  }

  // --- endings not chosen by the handler ---

  /** The deadline passed (Deadlines' callback). */
  deadlinePassed(): void {
    this.#exceeded(`deadline exceeded (grpc-timeout ${String(this.#headers['grpc-timeout'])})`);
  }

  /** The client has not finished sending its request (no END_STREAM yet), and the call has no status yet. */
  get requestPending(): boolean {
    return !this.#done && !this.#stream.recvClosed;
  }

  /**
   * The request was not whole within requestTimeoutMs (SessionState.checkRequests): the call
   * is answered DEADLINE_EXCEEDED, its handler's signal aborted, and its stream reset
   * (RST_STREAM NO_ERROR after the status, as the client is still sending), which releases
   * what it held.
   */
  requestTimedOut(requestTimeoutMs: number): void {
    this.#exceeded(requestTimeoutMessage(requestTimeoutMs));
  }

  #exceeded(details: string): void {
    if (this.#done || this.#streamGone()) return;
    const reason = new GrpcStatusError(GrpcStatus.DEADLINE_EXCEEDED, details);
    this.#abort(reason);
    this.endWithStatus(reason.status, reason.details, undefined);
  }

  /** The server is closing: the call is cancelled (RST_STREAM CANCEL, as the protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md) says). */
  cancelByServer(details: string): void {
    if (!this.#done) this.#abort(new GrpcStatusError(GrpcStatus.UNAVAILABLE, details));
    this.#stream.reset(H2_ERROR.CANCEL);
  }

  /** The stream closed: normal end, client cancellation (RST_STREAM), or connection loss. */
  streamClosed(): void {
    this.#session.callClosed(this);
    if (this.#done) return;
    this.#done = true;
    const reason = this.#abortReason ?? new GrpcStatusError(GrpcStatus.CANCELLED, `${this.method}: cancelled by the client`);
    this.#abort(reason);
    this.#statusDecided(GrpcStatus.CANCELLED, reason.details);
  }

  #abort(reason: GrpcStatusError): void {
    if (this.#abortReason !== undefined) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
    this.#queue?.fail(reason);
    const drain = this.#drain;
    this.#drain = undefined;
    drain?.reject(reason);
  }

  /** The status is decided: no timer left, interceptors told. */
  #statusDecided(status: StatusCode, details: string): void {
    if (this.deadlineSlot >= 0) this.#deadlines.remove(this);
    this.finished(status, details);
  }
}
