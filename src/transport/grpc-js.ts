/**
 * Serves a service of the handler API (../contracts/handler-api.ts) on a @grpc/grpc-js `Server`, so
 * one implementation runs on either transport. What a call means (interceptors, statuses,
 * call values, trailers) is ./call-core.ts, as on jwt-grpc's own HTTP/2; this adapter
 * only maps it onto grpc-js's calls, metadata and callbacks.
 */
import { Buffer } from 'node:buffer';
import type {
  Server,
  ServerDuplexStream,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Metadata as GrpcMetadata, sendUnaryData } from '@grpc/grpc-js';
import { JwtGrpcError } from '../base/errors.js';
import { grpcJs } from '../base/optional-deps.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { optionValue } from '../options/resolve.js';
import { CallCore, type CallSettings, deserializeError } from './call-core.js';
import { callerOfCertificate } from './caller.js';
import type { BidiStreamHandler, CallerIdentity, ClientStreamHandler, Handler, MethodDescriptor } from '../contracts/handler-api.js';
import type { ResponseCompression, CallInterceptor, ServerStreamHandler, ServiceDescriptor } from '../contracts/handler-api.js';
import type { ServiceImplementation, StatusCode, UnaryHandler } from '../contracts/handler-api.js';
import { CallMetadata, GrpcStatus, GrpcStatusError, isReservedMetadataKey } from '../contracts/handler-api.js';

/** Options of {@link addServiceToGrpcJs}. */
export interface GrpcJsServiceOptions {
  /** Run around every call of this service, in order. Default none. */
  readonly interceptors?: readonly CallInterceptor[];
  /** Where handler failures are logged. Default: stderr, warnings and errors. */
  readonly logger?: Logger;
}

/**
 * A request that did not deserialize. grpc-js answers a throwing deserializer with
 * INTERNAL; the wrapped deserializer returns this marker instead and the handler answers
 * the deserializer's own status (INVALID_ARGUMENT for a malformed message).
 */
class UndecodedRequest {
  constructor(readonly error: GrpcStatusError) {}
}

function wrapDeserializer(method: MethodDescriptor<unknown, unknown>): (bytes: Buffer) => unknown {
  const deserialize = method.requestDeserialize;
  return (bytes) => {
    try {
      return deserialize(bytes);
    } catch (err) {
      return new UndecodedRequest(deserializeError(err, method.path));
    }
  };
}

function toGrpcMetadata(metadata: CallMetadata | undefined): GrpcMetadata {
  const out = new (grpcJs().Metadata)();
  if (metadata === undefined) return out;
  for (const [key, values] of metadata.entries()) {
    for (const value of values) out.add(key, key.endsWith('-bin') && typeof value === 'string' ? Buffer.from(value) : value);
  }
  return out;
}

function fromGrpcMetadata(metadata: GrpcMetadata): CallMetadata {
  const out = new CallMetadata();
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (isReservedMetadataKey(key)) continue;
    for (const value of values) out.add(key, value);
  }
  return out;
}

/** What every kind of grpc-js server call has, as this adapter uses it. */
interface ServerSurfaceCall {
  readonly cancelled: boolean;
  readonly metadata: GrpcMetadata;
  getPeer(): string;
  /** Absent in grpc-js 1.10: there no certificate can be read, and a call has no caller. */
  getAuthContext?(): { readonly sslPeerCertificate?: { readonly raw: Buffer } } | null;
  getDeadline(): Date | number;
  sendMetadata(metadata: GrpcMetadata): void;
  once(event: 'cancelled', listener: () => void): unknown;
}

/** A server-streaming or bidi call: its status goes out with `end` or an `error` event. */
type ResponseSurface = ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>;

/**
 * One grpc-js call as the core's call. A call that answers once (unary, client-streaming)
 * settles through grpc-js's callback; a streaming response through its stream.
 */
class GrpcJsCall extends CallCore {
  readonly #surface: ServerSurfaceCall;
  readonly #callback: sendUnaryData<unknown> | undefined;
  #metadata: CallMetadata | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #settled = false;
  /** null: not read yet (most calls never ask). */
  #caller: CallerIdentity | undefined | null = null;

  constructor(method: string, settings: CallSettings, surface: ServerSurfaceCall, callback?: sendUnaryData<unknown>) {
    super(method, settings);
    this.#surface = surface;
    this.#callback = callback;
    if (settings.interceptors.length > 0) surface.once('cancelled', () => this.#cancelled());
  }

  get metadata(): CallMetadata {
    return (this.#metadata ??= fromGrpcMetadata(this.#surface.metadata));
  }

  get deadline(): number {
    const deadline = this.#surface.getDeadline();
    return deadline instanceof Date ? deadline.getTime() : deadline;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const abort = (): void => controller.abort(new GrpcStatusError(GrpcStatus.CANCELLED, `${this.method}: cancelled`));
      if (this.#surface.cancelled) abort();
      else this.#surface.once('cancelled', abort);
    }
    return this.#controller.signal;
  }

  get peer(): string {
    return this.#surface.getPeer();
  }

  /** grpc-js gives the peer certificate only once the TLS layer verified it (socket.authorized). */
  get caller(): CallerIdentity | undefined {
    if (this.#caller === null) this.#caller = callerOfCertificate(this.#surface.getAuthContext?.()?.sslPeerCertificate);
    return this.#caller;
  }

  sendMetadata(metadata: CallMetadata): void {
    this.#surface.sendMetadata(toGrpcMetadata(metadata));
  }

  /** grpc-js's server sends responses uncompressed; compression is optional for a server (doc/compression.md (https://github.com/grpc/grpc/blob/master/doc/compression.md)). */
  setResponseCompression(_encoding: ResponseCompression): void {}

  /** Runs the interceptors' onCallStart, then `run` (the handler, in the call's trace context), and settles the call with its result. */
  start(run: () => unknown): void {
    if (this.startInterceptors()) this.whenStarted(() => this.inCallContext(this.#run, run));
  }

  #run(run: () => unknown): void {
    try {
      this.settle(run());
    } catch (err) {
      this.fail(err);
    }
  }

  protected mayEnd(): boolean {
    return !this.#settled;
  }

  protected respond(response: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.finished(GrpcStatus.OK, '');
    const trailers = toGrpcMetadata(this.trailers);
    if (this.#callback !== undefined) this.#callback(null, response, trailers);
    else if (!this.#surface.cancelled) (this.#surface as ResponseSurface).end(trailers);
  }

  protected endWithStatus(status: StatusCode, details: string, metadata: CallMetadata | undefined): void {
    this.#settled = true;
    if (metadata !== undefined && metadata.size > 0) this.setTrailers(metadata);
    this.finished(status, details);
    const error = { code: status, details, metadata: toGrpcMetadata(this.trailers) };
    if (this.#callback !== undefined) this.#callback(error);
    else if (!this.#surface.cancelled) (this.#surface as ResponseSurface).emit('error', error);
  }

  /** The client cancelled, or the deadline passed: the status is decided (grpc-js answers it). */
  #cancelled(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.finished(GrpcStatus.CANCELLED, `${this.method}: cancelled`);
  }
}

/** Requests of a client-streaming or bidi call: decoded messages, or the status of one that did not decode. */
async function* requestsOf(stream: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const message of stream) {
    if (message instanceof UndecodedRequest) throw message.error;
    yield message;
  }
}

/** The request grpc-js decoded; a request that did not decode throws its error in the handler's turn (UndecodedRequest). */
function requestOf({ request }: { readonly request: unknown }): unknown {
  if (request instanceof UndecodedRequest) throw request.error;
  return request;
}

/** Writes with backpressure: resolves once grpc-js's stream takes more; rejects when the call is gone. */
function responseWriter(surface: ResponseSurface, method: string) {
  return {
    write(message: unknown): Promise<void> {
      if (surface.cancelled || surface.writableEnded)
        return Promise.reject(new GrpcStatusError(GrpcStatus.CANCELLED, `${method}: the call has ended`));
      if (surface.write(message)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const onDrain = (): void => {
          surface.off('cancelled', onCancel);
          resolve();
        };
        const onCancel = (): void => {
          surface.off('drain', onDrain);
          reject(new GrpcStatusError(GrpcStatus.CANCELLED, `${method}: cancelled`));
        };
        surface.once('drain', onDrain);
        surface.once('cancelled', onCancel);
      });
    },
  };
}

/** grpc-js's handler for one method: a GrpcJsCall around each call, the method's handler inside. */
function grpcJsHandler(method: MethodDescriptor<unknown, unknown>, handler: Handler, settings: CallSettings) {
  const path = method.path;
  if (method.requestStream && method.responseStream) {
    const bidi = handler as BidiStreamHandler<unknown, unknown>;
    return (surface: ServerDuplexStream<unknown, unknown>): void => {
      const call = new GrpcJsCall(path, settings, surface);
      call.start(() => bidi(requestsOf(surface), responseWriter(surface, path), call));
    };
  }
  if (method.requestStream) {
    const clientStream = handler as ClientStreamHandler<unknown, unknown>;
    return (surface: ServerReadableStream<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
      const call = new GrpcJsCall(path, settings, surface, callback);
      call.start(() => clientStream(requestsOf(surface), call));
    };
  }
  if (method.responseStream) {
    const serverStream = handler as ServerStreamHandler<unknown, unknown>;
    return (surface: ServerWritableStream<unknown, unknown>): void => {
      const call = new GrpcJsCall(path, settings, surface);
      call.start(() => serverStream(requestOf(surface), responseWriter(surface, path), call));
    };
  }
  const unary = handler as UnaryHandler<unknown, unknown>;
  return (surface: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
    const call = new GrpcJsCall(path, settings, surface, callback);
    call.start(() => unary(requestOf(surface), call));
  };
}

/**
 * Adds a service of the handler API to a grpc-js `Server`: every method of `definition`
 * served by the handler of the same name in `implementation`. A `requestDeserialize` that
 * throws a GrpcStatusError answers that status (grpc-js alone would answer INTERNAL).
 *
 * @example
 * ```ts
 * import { Server } from '@grpc/grpc-js';
 *
 * const server = new Server();
 * addServiceToGrpcJs(server, definition, { SayHello: (request) => ({ message: `hello ${request.name}` }) });
 * ```
 */
export function addServiceToGrpcJs(
  server: Server,
  definition: ServiceDescriptor,
  implementation: ServiceImplementation,
  options: GrpcJsServiceOptions = {},
): void {
  const settings: CallSettings = {
    interceptors: optionValue('interceptors', options.interceptors) ?? [],
    logger: optionValue('logger', options.logger) ?? createStderrLogger(),
  };
  const grpcDefinition: Record<string, unknown> = {};
  const handlers: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const handler = implementation[name];
    if (typeof handler !== 'function') {
      throw new JwtGrpcError('ERR_INVALID_OPTION', `addServiceToGrpcJs: no handler for ${method.path} (implementation.${name})`, {
        field: 'implementation',
      });
    }
    grpcDefinition[name] = {
      ...method,
      requestSerialize: method.requestSerialize ?? ((message: unknown) => message as Buffer),
      responseDeserialize: method.responseDeserialize ?? ((bytes: Buffer) => bytes),
      requestDeserialize: wrapDeserializer(method),
    };
    handlers[name] = grpcJsHandler(method, handler, settings) as UntypedServiceImplementation[string];
  }
  server.addService(grpcDefinition as Parameters<Server['addService']>[0], handlers);
}
