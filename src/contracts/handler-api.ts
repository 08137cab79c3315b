/**
 * The gRPC handler API, the same on both transports: a service's methods with their
 * codecs, handlers as plain functions in one object, the call a handler sees,
 * interceptors, and the TLS a server listens with. Both transports serve it: jwt-grpc's
 * own server (`./http2/`) and a grpc-js `Server` (`./grpc-js.ts`), so JwtService, health
 * and reflection are written once. What a call means lives in `./call-core.ts`.
 *
 * Method descriptors use grpc-js's field names (`requestDeserialize`, `responseSerialize`,
 * ...), so a definition from `@grpc/proto-loader` is one as it stands. The types' names
 * are not grpc-js's (CallMetadata, not Metadata; GrpcStatus, not Status; CallInterceptor,
 * not ServerInterceptor): they are other types, and a program that uses both packages
 * imports both without renaming either.
 */
import type { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../base/errors.js';
import { optionNames } from '../base/known-options.js';

/**
 * gRPC status codes (the gRPC project's `doc/statuscodes.md` (https://github.com/grpc/grpc/blob/master/doc/statuscodes.md)).
 *
 * @example
 * ```ts
 * throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such greeting');
 * ```
 */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/**
 * One of the {@link GrpcStatus} numbers.
 *
 * @example
 * ```ts
 * const onCallEnd = (_call: CallContext, { status }: CallOutcome) => status === GrpcStatus.OK || console.warn(status);
 * ```
 */
export type StatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/**
 * A metadata value: `-bin` keys carry bytes, every other key ASCII text.
 *
 * @example
 * ```ts
 * // hidden: declare const call: CallContext;
 * const trace: CallMetadataValue = call.metadata.get('x-trace-bin') ?? Buffer.alloc(0);
 * ```
 */
export type CallMetadataValue = string | Buffer;

/**
 * Call metadata (HTTP/2 headers or trailers that are not reserved by gRPC), keys in
 * lower case, every value of a repeated key kept in order.
 *
 * @example
 * ```ts
 * // hidden: declare const call: CallContext;
 * const tenant = call.metadata.get('x-tenant');
 * call.setTrailers(new CallMetadata().set('x-served-by', 'eu-1'));
 * ```
 */
export class CallMetadata {
  readonly #entries = new Map<string, CallMetadataValue[]>();

  /** The first value of `key`, or undefined. */
  get(key: string): CallMetadataValue | undefined {
    return this.#entries.get(key.toLowerCase())?.[0];
  }

  /** Every value of `key`, in the order received or added. */
  getAll(key: string): readonly CallMetadataValue[] {
    return this.#entries.get(key.toLowerCase()) ?? [];
  }

  /** Replaces every value of `key` with `value`. */
  set(key: string, value: CallMetadataValue): this {
    this.#entries.set(key.toLowerCase(), [value]);
    return this;
  }

  /** Adds `value` after the values `key` already has. */
  add(key: string, value: CallMetadataValue): this {
    const name = key.toLowerCase();
    const list = this.#entries.get(name);
    if (list === undefined) this.#entries.set(name, [value]);
    else list.push(value);
    return this;
  }

  delete(key: string): void {
    this.#entries.delete(key.toLowerCase());
  }

  get size(): number {
    return this.#entries.size;
  }

  /** `[key, values]` pairs, in insertion order. */
  entries(): IterableIterator<[string, CallMetadataValue[]]> {
    return this.#entries.entries();
  }
}

/**
 * A call that ends with a non-OK status. Handlers throw it (or reject with it) to answer
 * `status` with `details`; the client side rejects with it when a call fails. Like every
 * {@link JwtGrpcError}, making one never throws: its options are typed, not checked.
 *
 * @example
 * ```ts
 * throw new GrpcStatusError(GrpcStatus.UNAUTHENTICATED, 'missing token');
 * ```
 */
export class GrpcStatusError extends JwtGrpcError {
  readonly status: StatusCode;
  readonly details: string;
  readonly metadata: CallMetadata;

  constructor(status: StatusCode, details: string, options: { metadata?: CallMetadata; cause?: unknown } = {}) {
    super('ERR_GRPC_STATUS', details, options.cause === undefined ? {} : { cause: options.cause });
    this.status = status;
    this.details = details;
    this.metadata = options.metadata ?? new CallMetadata();
  }
}

/**
 * A typed slot for a value that an interceptor attaches to a call (`call.set`) and a
 * handler reads (`call.get`), e.g. the claims an auth interceptor verified. Keys compare
 * by identity: export the key from the module that sets it.
 *
 * @example
 * ```ts
 * export const CLAIMS = new CallKey<{ sub: string }>('claims');
 * // in an interceptor's onCallStart: call.set(CLAIMS, { sub: 'ada' });
 * // in a handler: const claims = call.get(CLAIMS);
 * ```
 */
export class CallKey<T> {
  /** Carries T for type inference only; never set. */
  declare readonly __type?: T;
  constructor(readonly description: string) {}
}

/**
 * Message compression a server may apply to its responses (the gRPC project's `doc/compression.md` (https://github.com/grpc/grpc/blob/master/doc/compression.md)).
 *
 * @example
 * ```ts
 * // hidden: declare const call: CallContext;
 * call.setResponseCompression('gzip'); // a large answer, for a client that accepts gzip
 * ```
 */
export type ResponseCompression = 'identity' | 'gzip' | 'deflate';

/**
 * What a handler knows about its call, whichever transport serves it.
 *
 * @example
 * ```ts
 * const sayHello: UnaryHandler<{ name: string }, { message: string }> = async (request, call) => {
 *   if (call.signal.aborted) throw new GrpcStatusError(GrpcStatus.CANCELLED, 'gone');
 *   return { message: `hello ${request.name} from ${call.peer}` };
 * };
 * ```
 */
export interface CallContext {
  /** The full method path, `/package.Service/Method`. */
  readonly method: string;
  /** The request's metadata (custom headers; gRPC's reserved ones removed). */
  readonly metadata: CallMetadata;
  /** Absolute deadline in `Date.now()` milliseconds from `grpc-timeout`; `Infinity` without one. */
  readonly deadline: number;
  /** Aborted when the client cancels, the deadline passes or the server is forced closed. */
  readonly signal: AbortSignal;
  /** The client's address, `ip:port`. */
  readonly peer: string;
  /**
   * Who is calling, from the client certificate that mutual TLS verified; undefined on a
   * connection without one (plaintext, or TLS without `requireClientCertificate`).
   */
  readonly caller: CallerIdentity | undefined;
  /** CallMetadata sent with the response headers; call before the first message. */
  sendMetadata(metadata: CallMetadata): void;
  /** CallMetadata added to the trailers that end the call. */
  setTrailers(metadata: CallMetadata): void;
  /**
   * Compresses the response messages that follow with `encoding`, when the client
   * accepts it (its `grpc-accept-encoding`); otherwise they go uncompressed. Before the
   * response headers are sent any encoding may be chosen; after, only the one already
   * announced or `identity` (per message, as the protocol allows).
   */
  setResponseCompression(encoding: ResponseCompression): void;
  /** The value an interceptor attached under `key`, or undefined. */
  get<T>(key: CallKey<T>): T | undefined;
  /** Attaches `value` under `key` for the rest of the call (interceptors, then the handler). */
  set<T>(key: CallKey<T>, value: T): void;
}

/**
 * The caller of a call, as its verified client certificate names it (mutual TLS). The same
 * on both transports and on a grpc-js server of your own (its peer certificate).
 *
 * @example
 * ```ts
 * const whoAmI: UnaryHandler<object, { id: string }> = (_request, call) => {
 *   if (call.caller?.id === undefined) throw new GrpcStatusError(GrpcStatus.UNAUTHENTICATED, 'a client certificate is required');
 *   return { id: call.caller.id }; // e.g. spiffe://example.org/ns/shop/sa/orders
 * };
 * ```
 */
export interface CallerIdentity {
  /**
   * The certificate's first URI SAN as written (a SPIFFE ID), else `dns:` + its first DNS
   * SAN; undefined when it has neither (the subject's CN is never used).
   */
  readonly id: string | undefined;
  /** The client certificate, DER. */
  readonly certificate: Buffer;
  /** Base64url SHA-256 of {@link certificate}: RFC 8705 section 3.1's `x5t#S256`. */
  readonly thumbprint: string;
}

/**
 * The responses of a server-streaming or bidi call.
 *
 * @example
 * ```ts
 * const count: ServerStreamHandler<{ to: number }, { n: number }> = async (request, responses) => {
 *   for (let n = 1; n <= request.to; n++) await responses.write({ n }); // waits on flow control
 * };
 * ```
 */
export interface ResponseStream<Res> {
  /** Sends one message; resolves when the stream can take more (HTTP/2 flow control). */
  write(message: Res): Promise<void>;
}

/**
 * A unary method: one request in, one response (or a thrown {@link GrpcStatusError}) out.
 *
 * @example
 * ```ts
 * const echo: UnaryHandler<{ text: string }, { text: string }> = (request) => ({ text: request.text });
 * ```
 */
export type UnaryHandler<Req, Res> = (request: Req, call: CallContext) => Res | Promise<Res>;
/**
 * A server-streaming method: the call ends OK when the returned promise resolves.
 *
 * @example
 * ```ts
 * const ticks: ServerStreamHandler<object, { at: number }> = async (_request, responses, call) => {
 *   while (!call.signal.aborted) await responses.write({ at: Date.now() });
 * };
 * ```
 */
export type ServerStreamHandler<Req, Res> = (request: Req, responses: ResponseStream<Res>, call: CallContext) => void | Promise<void>;
/**
 * A client-streaming method: reads every request, answers once.
 *
 * @example
 * ```ts
 * const sum: ClientStreamHandler<{ n: number }, { total: number }> = async (requests) => {
 *   let total = 0;
 *   for await (const { n } of requests) total += n;
 *   return { total };
 * };
 * ```
 */
export type ClientStreamHandler<Req, Res> = (requests: AsyncIterable<Req>, call: CallContext) => Res | Promise<Res>;
/**
 * A bidirectional-streaming method: requests and responses flow independently.
 *
 * @example
 * ```ts
 * const upper: BidiStreamHandler<{ text: string }, { text: string }> = async (requests, responses) => {
 *   for await (const { text } of requests) await responses.write({ text: text.toUpperCase() });
 * };
 * ```
 */
export type BidiStreamHandler<Req, Res> = (
  requests: AsyncIterable<Req>,
  responses: ResponseStream<Res>,
  call: CallContext,
) => void | Promise<void>;

// biome-ignore-start lint/suspicious/noExplicitAny: typed loosely on purpose, as its TSDoc says
/**
 * Any of the four handler kinds. Typed loosely on purpose: a service's implementation
 * maps each method name to the kind its definition declares (requestStream/responseStream).
 *
 * @example
 * ```ts
 * // hidden: declare const echo: UnaryHandler<{ text: string }, { text: string }>;
 * // hidden: declare const sum: ClientStreamHandler<{ n: number }, { total: number }>;
 * const handlers: Record<string, Handler> = { Echo: echo, Sum: sum };
 * ```
 */
export type Handler = UnaryHandler<any, any> | ServerStreamHandler<any, any> | ClientStreamHandler<any, any> | BidiStreamHandler<any, any>;
// biome-ignore-end lint/suspicious/noExplicitAny: -

/**
 * One method: its path, call kind and codecs. A `requestDeserialize` that throws a
 * {@link GrpcStatusError} answers that status (INVALID_ARGUMENT for a malformed message);
 * any other throw answers INTERNAL.
 *
 * @example
 * ```ts
 * const raw = (bytes: Buffer) => bytes;
 * const ping: MethodDescriptor<Buffer, Buffer> = {
 *   path: '/demo.Ping/Ping', requestStream: false, responseStream: false, requestDeserialize: raw, responseSerialize: raw,
 * };
 * ```
 */
export interface MethodDescriptor<Req, Res> {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  readonly requestDeserialize: (bytes: Buffer) => Req;
  readonly responseSerialize: (message: Res) => Buffer;
  /**
   * The method only reads (its .proto says `option idempotency_level = NO_SIDE_EFFECTS;`):
   * the Connect protocol may call it by GET, and that answer may be cached. Absent: false.
   */
  readonly noSideEffects?: boolean;
  /** `Cache-Control` of such a method's answer to a GET; absent: `no-cache` (every use revalidated by its ETag). */
  readonly cacheControl?: string;
  /**
   * A shortcut through the proto3 JSON mapping of Connect and gRPC-Web JSON calls: the
   * parsed JSON body to the request, as `requestDeserialize` would give it from the same
   * message in protobuf, or undefined to leave it to the generic mapping (which also
   * refuses what the mapping refuses). Absent: the generic mapping reads every request.
   */
  readonly requestFromJson?: (json: unknown) => Req | undefined;
  /** The same for the response: its JSON as the mapping writes it (UTF-8), or undefined to leave it to the generic mapping. */
  readonly responseToJson?: (message: Res) => Buffer | undefined;
  /** Client side, when the definition also serves a client (proto-loader's do). */
  readonly requestSerialize?: (message: Req) => Buffer;
  readonly responseDeserialize?: (bytes: Buffer) => Res;
}

// biome-ignore-start lint/suspicious/noExplicitAny: methods of every message type share one record
/**
 * A service's methods by name, e.g. a `@grpc/proto-loader` package definition's entry.
 *
 * @example
 * ```ts
 * // hidden: import { loadSync } from '@grpc/proto-loader';
 * // hidden: declare const server: JwtServer;
 * const greeter = loadSync('greeter.proto')['demo.Greeter'] as unknown as ServiceDescriptor;
 * server.addService(greeter, { Hello: (request: { name: string }) => ({ message: `hello ${request.name}` }) });
 * ```
 */
export type ServiceDescriptor = Readonly<Record<string, MethodDescriptor<any, any>>>;
// biome-ignore-end lint/suspicious/noExplicitAny: -

/**
 * Handlers by method name, one per method of the definition: plain functions in one object.
 *
 * @example
 * ```ts
 * const implementation: ServiceImplementation = { Hello: (request: { name: string }) => ({ message: `hello ${request.name}` }) };
 * ```
 */
export type ServiceImplementation = Readonly<Record<string, Handler>>;

/**
 * A service ready for a transport to serve: its full name, methods and handlers.
 *
 * @example
 * ```ts
 * const greeter: ServedService = { name: 'demo.Greeter', definition, implementation: { Hello: sayHello } };
 * server.addService(greeter.definition, greeter.implementation);
 * ```
 */
export interface ServedService {
  /** Fully qualified, e.g. `grpc.health.v1.Health`. */
  readonly name: string;
  readonly definition: ServiceDescriptor;
  readonly implementation: ServiceImplementation;
}

/**
 * How a call ended, as an interceptor's `onCallEnd` sees it.
 *
 * @example
 * ```ts
 * const timing: CallInterceptor = { onCallEnd: (call, outcome: CallOutcome) => console.log(call.method, outcome.status, outcome.durationMs) };
 * ```
 */
export interface CallOutcome {
  /** The status sent to the client; CANCELLED when the client cancelled the call. */
  readonly status: StatusCode;
  /** The status message ('' for OK). */
  readonly details: string;
  /** Milliseconds from the request headers to the status. */
  readonly durationMs: number;
}

/**
 * Cross-cutting work around every call of a server (metrics, auth, logging), in the order
 * given. Installing none costs a call nothing.
 *
 * @example
 * ```ts
 * // hidden: declare const CLAIMS: CallKey<unknown>;
 * // hidden: declare function verify(token: string): unknown;
 * const requireToken: CallInterceptor = {
 *   onCallStart(call) {
 *     const token = call.metadata.get('authorization');
 *     if (typeof token !== 'string') throw new GrpcStatusError(GrpcStatus.UNAUTHENTICATED, 'missing authorization');
 *     call.set(CLAIMS, verify(token));
 *   },
 * };
 * ```
 */
export interface CallInterceptor {
  /**
   * Runs once the request headers are in, before the handler. Throwing (or rejecting
   * with) a {@link GrpcStatusError} refuses the call with that status, and the
   * interceptors after this one and the handler do not run; any other error answers
   * INTERNAL.
   */
  readonly onCallStart?: (call: CallContext) => void | Promise<void>;
  /**
   * Runs once per call whose `onCallStart`s began, when its status is decided (sent, or
   * the call cancelled). Must not throw; what it throws is logged and dropped.
   */
  readonly onCallEnd?: (call: CallContext, outcome: CallOutcome) => void;
  /**
   * Runs once when createJwtServer's `listen` has every service, before the port opens,
   * with the full path (`/package.Service/Method`) of every method the server serves.
   * Throwing stops the start: `listen` rejects with that error and nothing is served.
   * jwtAuthInterceptor refuses a rule that names no served method here.
   */
  readonly onServe?: (methods: ReadonlySet<string>) => void;
}

/**
 * Request headers that are gRPC's own, not the application's: they never appear in
 * `call.metadata`, and a handler cannot send them as metadata.
 */
const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set([
  'content-type',
  'te',
  'grpc-timeout',
  'grpc-encoding',
  'grpc-accept-encoding',
  'grpc-message-type',
  'grpc-status',
  'grpc-message',
  'grpc-status-details-bin',
  'content-length',
  'connection',
  'host',
]);

/** True for a header gRPC reserves (a pseudo-header or one of its own), never application metadata. @internal */
export function isReservedMetadataKey(name: string): boolean {
  return name.charCodeAt(0) === 58 /* ':' */ || RESERVED_METADATA_KEYS.has(name);
}

/**
 * True for a promise or any other thenable a handler, an interceptor or an authorization hook
 * may return: the caller awaits only then, so an answer given at once stays synchronous.
 *
 * @example
 * ```ts
 * const answer = hook(call);
 * const verdict = isThenable(answer) ? await answer : answer;
 * ```
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** What is wrong with a list of interceptors, or undefined when it is one. @internal */
export function interceptorsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'must be an array';
  for (const [index, interceptor] of value.entries()) {
    const kind = typeof interceptor;
    if ((kind !== 'object' && kind !== 'function') || interceptor === null) {
      return `entry ${index} must be an object whose onCallStart and onCallEnd are functions`;
    }
    const { onCallStart, onCallEnd, onServe } = interceptor as { onCallStart?: unknown; onCallEnd?: unknown; onServe?: unknown };
    if ((onCallStart !== undefined && typeof onCallStart !== 'function') || (onCallEnd !== undefined && typeof onCallEnd !== 'function')) {
      return `entry ${index} must be an object whose onCallStart and onCallEnd are functions`;
    }
    if (onServe !== undefined && typeof onServe !== 'function') return `entry ${index}: onServe must be a function`;
    // A function is a grpc-js interceptor. One that also has hooks serves both kinds of
    // server (jwtAuthInterceptor); one without would run nothing here, and an auth
    // interceptor that silently protects nothing fails open: refused.
    if (kind === 'function' && onCallStart === undefined && onCallEnd === undefined) {
      return `entry ${index} is a grpc-js interceptor (a function); this server takes { onCallStart, onCallEnd } hooks`;
    }
  }
  return undefined;
}

/**
 * TLS for a server's `listen`, on either transport: ALPN offers h2 (and, on the own transport, http/1.1 for Connect and gRPC-Web).
 *
 * @example
 * ```ts
 * // hidden: import { readFileSync } from 'node:fs';
 * // hidden: declare const server: JwtServer;
 * const tls: ServerTlsOptions = { cert: readFileSync('server.crt'), key: readFileSync('server.key') };
 * await server.listen('0.0.0.0:50051', { ...tls, ca: readFileSync('clients-ca.crt'), requireClientCertificate: true });
 * ```
 */
export interface ServerTlsOptions {
  /** The server's private key (PEM). */
  readonly key: string | Buffer;
  /** The server's certificate chain (PEM). */
  readonly cert: string | Buffer;
  /** CA certificates to verify client certificates against. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** Mutual TLS: demand a client certificate signed by `ca`, refuse the connection without one. Default false. */
  readonly requireClientCertificate?: boolean;
}

/** The names {@link ServerTlsOptions} holds; an object with another is refused. @internal */
export const SERVER_TLS_OPTION_NAMES = optionNames<ServerTlsOptions>({ key: true, cert: true, ca: true, requireClientCertificate: true });
