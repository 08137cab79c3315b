/**
 * One Connect or gRPC-Web call on one {@link Exchange}: the request body read into
 * messages, the handler run through the same core as a gRPC call (../call-core.ts:
 * interceptors, errors to statuses, trace context), the answer written as the protocol's
 * wire (./wire.ts) says. Nothing here knows HTTP/2.
 */
import type { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../../base/errors.js';
import { CallCore, type CallSettings, deserializeError } from '../call-core.js';
import { strongEtag, noneMatch } from '../../documents/etag.js';
import {
  type BidiStreamHandler,
  type CallerIdentity,
  type CallMetadata,
  type ClientStreamHandler,
  GrpcStatus,
  GrpcStatusError,
  type ResponseCompression,
  type ResponseStream,
  type ServerStreamHandler,
  type StatusCode,
  type UnaryHandler,
} from '../../contracts/handler-api.js';
import { type MessageEncoding, compress, decompress } from '../http2/compression.js';
import type { DeadlineEntry, Deadlines } from '../http2/deadlines.js';
import { metadataFromRawHeaders } from '../http2/metadata.js';
import { RequestQueue } from '../http2/request-queue.js';
import type { Route } from '../http2/router.js';
import type { Exchange, ExchangeFields, ExchangeListener } from './exchange.js';
import { CALL_PROTOCOL, type ProtocolWire } from './wire.js';

/** A method's request and response messages to and from the bytes a protocol carries (protobuf, or the JSON mapping). */
export interface MessageCodec {
  decode(bytes: Buffer): unknown;
  encode(message: unknown): Buffer;
}

/** What every protocol call of a server shares. */
export interface ProtocolShared {
  readonly settings: CallSettings;
  readonly maxReceiveMessageBytes: number;
  readonly deadlines: Deadlines;
}

/** A GET of a method without side effects: its answer is cacheable. */
export interface CacheableGet {
  readonly ifNoneMatch: string | undefined;
  readonly cacheControl: string;
}

/** How the call began: its route, wire, codec, deadline, and the headers every answer carries (CORS). */
export interface ProtocolCallInit {
  readonly route: Route;
  readonly wire: ProtocolWire;
  readonly codec: MessageCodec;
  readonly timeoutMs: number;
  /** The header the timeout came from, for the DEADLINE_EXCEEDED message. */
  readonly timeoutHeader: string;
  readonly extraHeaders: ExchangeFields;
  readonly get?: CacheableGet;
}

/** Request headers the protocols own: never a handler's metadata. */
const PROTOCOL_HEADERS: ReadonlySet<string> = new Set([
  'connect-protocol-version',
  'connect-timeout-ms',
  'connect-content-encoding',
  'connect-accept-encoding',
  'content-encoding',
  'accept-encoding',
  'x-grpc-web',
  'origin',
]);

/** The request's metadata: its headers less gRPC's reserved ones and the protocols' own. */
function requestMetadata(raw: readonly string[]): CallMetadata {
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (!PROTOCOL_HEADERS.has(name)) kept.push(name, raw[i + 1] as string);
  }
  return metadataFromRawHeaders(kept);
}

const RESOLVED = Promise.resolve();

export class ProtocolCall extends CallCore implements DeadlineEntry, ExchangeListener {
  readonly deadline: number;
  deadlineAt = 0;
  deadlineSlot = -1;
  readonly #exchange: Exchange;
  readonly #init: ProtocolCallInit;
  readonly #wire: ProtocolWire;
  readonly #shared: ProtocolShared;
  #metadata: CallMetadata | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #abortReason: GrpcStatusError | undefined = undefined;
  /** Metadata the handler sent before the answer: a streaming wire sends it at once, a unary one with the answer. */
  #headerMetadata: CallMetadata | undefined = undefined;
  #headersSent = false;
  #done = false;
  #encoding: MessageEncoding = 'identity';
  #request: Buffer | undefined = undefined;
  #queue: RequestQueue<unknown> | undefined = undefined;
  #drain: { promise: Promise<void>; resolve(): void; reject(err: unknown): void } | undefined = undefined;

  constructor(exchange: Exchange, init: ProtocolCallInit, shared: ProtocolShared) {
    super(init.route.path, shared.settings);
    this.#exchange = exchange;
    this.#init = init;
    this.#wire = init.wire;
    this.#shared = shared;
    this.set(CALL_PROTOCOL, init.wire.protocol);
    const timeoutMs = init.timeoutMs;
    this.deadline = timeoutMs === Number.POSITIVE_INFINITY ? timeoutMs : Date.now() + timeoutMs;
    if (timeoutMs !== Number.POSITIVE_INFINITY) shared.deadlines.add(this, timeoutMs);
  }

  /**
   * Starts the call: interceptors, then it takes the exchange, then (streaming requests)
   * the handler. The interceptors start first: an exchange hands over at once what it
   * buffered before the call took it (a whole body, its end), and a handler must never run
   * before them.
   */
  start(): void {
    const kind = this.#init.route.kind;
    if (kind === 'client-stream' || kind === 'bidi') this.#queue = new RequestQueue(this.#exchange);
    const proceed = this.startInterceptors();
    // Refused: the call is done, and what the exchange hands over is dropped; it still tells the close.
    this.#exchange.listen(this);
    if (!proceed) return;
    if (this.#queue !== undefined) this.whenStarted(() => this.inCallContext(this.#runStreaming, undefined));
  }

  // --- CallContext ---

  get metadata(): CallMetadata {
    return (this.#metadata ??= requestMetadata(this.#exchange.rawHeaders));
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  get peer(): string {
    return this.#exchange.peer.address;
  }

  get caller(): CallerIdentity | undefined {
    return this.#exchange.peer.caller;
  }

  sendMetadata(metadata: CallMetadata): void {
    if (this.#headersSent || this.#done || this.#headerMetadata !== undefined) {
      throw new JwtGrpcError('ERR_SERVER_STATE', `sendMetadata: the response headers of ${this.method} were already sent`);
    }
    this.#headerMetadata = metadata;
    if (this.#wire.streaming) this.#sendHead();
  }

  setResponseCompression(encoding: ResponseCompression): void {
    if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'deflate') {
      throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `setResponseCompression: unknown encoding ${JSON.stringify(encoding)}`);
    }
    if (this.#headersSent && encoding !== 'identity' && encoding !== this.#encoding) {
      throw new JwtGrpcError('ERR_SERVER_STATE', `setResponseCompression: the response headers announced ${this.#encoding}`);
    }
    if (!this.#headersSent) this.#encoding = this.#wire.accepts(encoding) ? encoding : 'identity';
  }

  // --- request side (ExchangeListener) ---

  data(chunk: Buffer): void {
    if (this.#done) return;
    const reader = this.#wire.reader;
    try {
      reader.push(chunk, this);
    } catch (err) {
      this.fail(err);
      return;
    }
    // The bytes of whole messages no longer count against the connection's memory ceiling.
    if (!reader.holding) this.#exchange.release();
  }

  /** One whole request message. */
  onMessage(compressed: boolean, bytes: Buffer): void {
    let payload = bytes;
    if (compressed) {
      const encoding = this.#wire.requestEncoding;
      if (encoding === 'identity') {
        throw new GrpcStatusError(GrpcStatus.INTERNAL, 'request message is compressed but the request names no encoding');
      }
      payload = decompress(encoding, bytes, this.#shared.maxReceiveMessageBytes);
    }
    const queue = this.#queue;
    if (queue === undefined) {
      if (this.#request !== undefined) {
        throw new GrpcStatusError(GrpcStatus.UNIMPLEMENTED, `received a second request message for ${this.method}, which takes one`);
      }
      this.#request = payload;
      return;
    }
    queue.push(this.#decode(payload));
  }

  #decode(bytes: Buffer): unknown {
    try {
      return this.#init.codec.decode(bytes);
    } catch (err) {
      throw deserializeError(err, this.method);
    }
  }

  end(): void {
    if (this.#done) return;
    try {
      this.#wire.reader.finish(this);
    } catch (err) {
      this.fail(err);
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

  drained(): void {
    const drain = this.#drain;
    this.#drain = undefined;
    drain?.resolve();
  }

  interrupted(status: StatusCode, details: string, respondable: boolean): void {
    if (this.#done) return;
    const reason = new GrpcStatusError(status, details);
    this.#abort(reason);
    if (respondable) {
      this.endWithStatus(status, details, undefined);
      return;
    }
    // The transport answers (an HTTP/1.1 413) or closes the exchange itself: the call has ended.
    this.#done = true;
    this.#statusDecided(status, details);
  }

  closed(): void {
    if (this.#done) return;
    this.#done = true;
    const reason = this.#abortReason ?? new GrpcStatusError(GrpcStatus.CANCELLED, `${this.method}: cancelled by the client`);
    this.#abort(reason);
    this.#statusDecided(GrpcStatus.CANCELLED, reason.details);
  }

  // --- handlers ---

  #runSingleRequest(bytes: Buffer): void {
    let request: unknown;
    try {
      request = this.#decode(bytes);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (this.#init.route.kind === 'server-stream') {
      this.#runStreaming(request);
      return;
    }
    let result: unknown;
    try {
      result = (this.#init.route.handler as UnaryHandler<unknown, unknown>)(request, this);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.settle(result);
  }

  #runStreaming(request: unknown): void {
    const responses: ResponseStream<unknown> = { write: (message) => this.#write(message) };
    const route = this.#init.route;
    let result: unknown;
    try {
      if (route.kind === 'server-stream') {
        result = (route.handler as ServerStreamHandler<unknown, unknown>)(request, responses, this);
      } else if (route.kind === 'client-stream') {
        result = (route.handler as ClientStreamHandler<unknown, unknown>)(this.#queue as RequestQueue<unknown>, this);
      } else {
        result = (route.handler as BidiStreamHandler<unknown, unknown>)(this.#queue as RequestQueue<unknown>, responses, this);
      }
    } catch (err) {
      this.fail(err);
      return;
    }
    this.settle(result);
  }

  protected respond(response: unknown): void {
    const kind = this.#init.route.kind;
    if (kind === 'unary' || kind === 'client-stream') this.#respondOnce(response);
    else if (this.mayEnd()) this.endWithStatus(GrpcStatus.OK, '', undefined);
  }

  // --- response side ---

  #sendHead(): void {
    this.#headersSent = true;
    this.#exchange.respond(200, { ...this.#wire.head(this.#encoding, this.#headerMetadata), ...this.#init.extraHeaders });
  }

  #encoded(message: unknown): { encoding: MessageEncoding; bytes: Buffer } {
    const bytes = this.#init.codec.encode(message);
    const encoding = this.#encoding;
    return encoding === 'identity' ? { encoding, bytes } : { encoding, bytes: compress(encoding, bytes) };
  }

  #respondOnce(response: unknown): void {
    if (!this.mayEnd()) return;
    let message: { encoding: MessageEncoding; bytes: Buffer };
    try {
      message = this.#encoded(response);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.#done = true;
    const exchange = this.#exchange;
    if (this.#headersSent) {
      exchange.write(this.#wire.message(message.encoding !== 'identity', message.bytes));
      exchange.write(this.#wire.tail(GrpcStatus.OK, '', this.trailers));
      exchange.end();
    } else {
      const whole = this.#wire.whole(GrpcStatus.OK, '', this.#headerMetadata, this.trailers, message);
      const get = this.#init.get;
      if (get === undefined) this.#sendWhole(whole.status, whole.headers, whole.body);
      else this.#sendCacheable(get, whole.headers, whole.body);
    }
    this.#statusDecided(GrpcStatus.OK, '');
  }

  /** A GET's answer: with its ETag and Cache-Control, or 304 without a body when the client has it (RFC 9110 section 13.1.2). */
  #sendCacheable(get: CacheableGet, headers: ExchangeFields, body: readonly Buffer[]): void {
    const etag = strongEtag(body[0] as Buffer);
    const cache = { etag, 'cache-control': get.cacheControl, vary: 'accept-encoding' };
    if (noneMatch(get.ifNoneMatch, etag)) {
      this.#exchange.respond(304, { ...cache, ...this.#init.extraHeaders }, true);
      return;
    }
    this.#sendWhole(200, { ...headers, ...cache }, body);
  }

  #sendWhole(status: number, headers: ExchangeFields, body: readonly Buffer[]): void {
    const exchange = this.#exchange;
    let length = 0;
    for (const chunk of body) length += chunk.length;
    const all = { ...headers, ...this.#init.extraHeaders, 'content-length': length };
    if (body.length === 1) {
      exchange.respondWhole(status, all, body[0] as Buffer);
      return;
    }
    exchange.respond(status, all);
    for (const chunk of body) exchange.write(chunk);
    exchange.end();
  }

  #write(message: unknown): Promise<void> {
    if (this.#done) {
      return Promise.reject(this.#abortReason ?? new GrpcStatusError(GrpcStatus.FAILED_PRECONDITION, `${this.method}: the call has ended`));
    }
    let encoded: { encoding: MessageEncoding; bytes: Buffer };
    try {
      encoded = this.#encoded(message);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!this.#headersSent) this.#sendHead();
    if (this.#exchange.write(this.#wire.message(encoded.encoding !== 'identity', encoded.bytes))) return RESOLVED;
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

  protected mayEnd(): boolean {
    return !this.#done && !this.#exchange.closed;
  }

  protected endWithStatus(status: StatusCode, details: string, metadata: CallMetadata | undefined): void {
    this.#done = true;
    if (metadata !== undefined && metadata.size > 0) this.setTrailers(metadata);
    const wire = this.#wire;
    try {
      if (this.#headersSent) {
        this.#exchange.write(wire.tail(status, details, this.trailers));
        this.#exchange.end();
      } else {
        const whole = wire.whole(status, details, this.#headerMetadata, this.trailers, undefined);
        this.#sendWhole(whole.status, whole.headers, whole.body);
      }
    } catch (err) {
      // Trailers a handler set that no header can carry: the status still goes out, without them,
      // once. What fails with nothing of the handler's left to drop is the exchange's own: it is aborted.
      const droppable = this.trailers !== undefined || this.#headerMetadata !== undefined;
      this.settings.logger.error(`${this.method}: ${droppable ? 'trailers dropped' : 'status not sent'}`, {
        error: (err as Error).message,
      });
      this.trailers = undefined;
      this.#headerMetadata = undefined;
      if (droppable && !this.#exchange.closed) {
        this.endWithStatus(status, details, undefined);
        return;
      }
      if (!this.#exchange.closed) this.#exchange.abort();
    }
    this.#statusDecided(status, details);
  }

  // --- endings not chosen by the handler ---

  deadlinePassed(): void {
    const header = this.#init.timeoutHeader;
    this.interrupted(GrpcStatus.DEADLINE_EXCEEDED, `deadline exceeded (${header} ${String(this.#exchange.headers[header])})`, true);
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

  #statusDecided(status: StatusCode, details: string): void {
    if (this.deadlineSlot >= 0) this.#shared.deadlines.remove(this);
    this.finished(status, details);
  }
}
