/**
 * Serves a service of the handler API (./handler-api.ts) on a @grpc/grpc-js `Server`, so one
 * implementation runs on either transport. Handlers, statuses, metadata, deadlines,
 * cancellation and interceptors mean the same on both.
 */
import type {
  Server,
  ServerDuplexStream,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  UntypedServiceImplementation,
  Metadata as GrpcMetadata,
  sendUnaryData,
} from '@grpc/grpc-js';
import { JwtGrpcError } from '../errors.js';
import { grpcJs } from '../optional-deps.js';
import { type Logger, createStderrLogger } from '../log.js';
import {
  type BidiStreamHandler,
  type CallContext,
  type CallKey,
  type ClientStreamHandler,
  GrpcStatusError,
  type Handler,
  Metadata,
  type MethodDefinition,
  type ResponseCompression,
  type ServerInterceptor,
  type ServerStreamHandler,
  type ServiceDefinition,
  type ServiceImplementation,
  Status,
  type StatusCode,
  type UnaryHandler,
  checkInterceptors,
  isReservedMetadataKey,
} from './handler-api.js';

/** Options of {@link addServiceToGrpcJs}. */
export interface GrpcJsServiceOptions {
  /** Run around every call of this service, in order. Default none. */
  readonly interceptors?: readonly ServerInterceptor[];
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

function toStatusError(err: unknown, method: string): GrpcStatusError {
  if (err instanceof GrpcStatusError) return err;
  // The status code document: an error parsing the request is INTERNAL.
  return new GrpcStatusError(Status.INTERNAL, `could not parse the request message of ${method}: ${(err as Error)?.message ?? String(err)}`);
}

function wrapDeserializer(method: MethodDefinition<unknown, unknown>): (bytes: Buffer) => unknown {
  const deserialize = method.requestDeserialize;
  return (bytes) => {
    try {
      return deserialize(bytes);
    } catch (err) {
      return new UndecodedRequest(toStatusError(err, method.path));
    }
  };
}

function toGrpcMetadata(metadata: Metadata | undefined): GrpcMetadata {
  const out = new (grpcJs().Metadata)();
  if (metadata === undefined) return out;
  for (const [key, values] of metadata.entries()) {
    for (const value of values) out.add(key, key.endsWith('-bin') && typeof value === 'string' ? Buffer.from(value) : value);
  }
  return out;
}

function fromGrpcMetadata(metadata: GrpcMetadata): Metadata {
  const out = new Metadata();
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (isReservedMetadataKey(key)) continue;
    for (const value of values) out.add(key, value);
  }
  return out;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** The status grpc-js sends for `err`: a GrpcStatusError as it says, anything else INTERNAL (logged). */
function serviceError(
  err: unknown,
  method: string,
  logger: Logger,
  trailers?: Metadata,
): { code: number; details: string; metadata: GrpcMetadata } {
  let error: { code: number; details: string; metadata: GrpcMetadata };
  if (err instanceof GrpcStatusError) {
    error = { code: err.status, details: err.details, metadata: toGrpcMetadata(err.metadata) };
  } else {
    logger.error(`${method} failed`, { error: err instanceof Error ? err.message : String(err) });
    error = { code: Status.INTERNAL, details: `${method}: internal error`, metadata: new (grpcJs().Metadata)() };
  }
  if (trailers !== undefined) error.metadata.merge(toGrpcMetadata(trailers));
  return error;
}

/** What every kind of grpc-js server call has, as this adapter uses it. */
interface ServerSurfaceCall {
  readonly cancelled: boolean;
  readonly metadata: GrpcMetadata;
  getPeer(): string;
  getDeadline(): Date | number;
  sendMetadata(metadata: GrpcMetadata): void;
  once(event: 'cancelled', listener: () => void): unknown;
}

/** One grpc-js call as a {@link CallContext}; metadata and the AbortSignal are made when first read. */
class GrpcJsCall implements CallContext {
  readonly method: string;
  readonly #call: ServerSurfaceCall;
  #metadata: Metadata | undefined;
  #controller: AbortController | undefined;
  #values: Map<CallKey<unknown>, unknown> | undefined;
  trailers: Metadata | undefined;
  readonly startedAt = performance.now();

  constructor(method: string, call: ServerSurfaceCall) {
    this.method = method;
    this.#call = call;
  }

  get metadata(): Metadata {
    return (this.#metadata ??= fromGrpcMetadata(this.#call.metadata));
  }

  get deadline(): number {
    const deadline = this.#call.getDeadline();
    return deadline instanceof Date ? deadline.getTime() : deadline;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const abort = (): void => controller.abort(new GrpcStatusError(Status.CANCELLED, `${this.method}: cancelled`));
      if (this.#call.cancelled) abort();
      else this.#call.once('cancelled', abort);
    }
    return this.#controller.signal;
  }

  get peer(): string {
    return this.#call.getPeer();
  }

  sendMetadata(metadata: Metadata): void {
    this.#call.sendMetadata(toGrpcMetadata(metadata));
  }

  setTrailers(metadata: Metadata): void {
    const trailers = (this.trailers ??= new Metadata());
    for (const [key, values] of metadata.entries()) for (const value of values) trailers.add(key, value);
  }

  /** grpc-js's server sends responses uncompressed; compression is optional for a server (doc/compression.md). */
  setResponseCompression(_encoding: ResponseCompression): void {}

  get<T>(key: CallKey<T>): T | undefined {
    return this.#values?.get(key) as T | undefined;
  }

  set<T>(key: CallKey<T>, value: T): void {
    (this.#values ??= new Map()).set(key, value);
  }

  get cancelled(): boolean {
    return this.#call.cancelled;
  }
}

/** Runs interceptors around one call: start before the handler, end once with the outcome. */
class Interception {
  #ended = false;
  constructor(
    readonly interceptors: readonly ServerInterceptor[],
    readonly call: GrpcJsCall,
    readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    for (const interceptor of this.interceptors) await interceptor.onCallStart?.(this.call);
  }

  end(status: StatusCode, details: string): void {
    if (this.#ended || this.interceptors.length === 0) return;
    this.#ended = true;
    const outcome = { status, details, durationMs: performance.now() - this.call.startedAt };
    for (const interceptor of this.interceptors) {
      try {
        interceptor.onCallEnd?.(this.call, outcome);
      } catch (err) {
        this.logger.error(`${this.call.method}: interceptor onCallEnd failed`, { error: (err as Error)?.message ?? String(err) });
      }
    }
  }
}

/** Requests of a client-streaming or bidi call: decoded messages, or the status of one that did not decode. */
async function* requestsOf(stream: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const message of stream) {
    if (message instanceof UndecodedRequest) throw message.error;
    yield message;
  }
}

interface Settle {
  ok(value?: unknown): void;
  fail(err: unknown): void;
}

/**
 * The shared shape of every kind: run the interceptors' onCallStart, then `run`; settle
 * the call once with its result or error; tell the interceptors how it ended.
 */
function runCall(
  call: GrpcJsCall,
  surface: ServerSurfaceCall,
  interceptors: readonly ServerInterceptor[],
  logger: Logger,
  run: () => unknown,
  settle: Settle,
): void {
  const interception = new Interception(interceptors, call, logger);
  if (interceptors.length > 0) {
    surface.once('cancelled', () => interception.end(Status.CANCELLED, `${call.method}: cancelled`));
  }
  const succeed = (value: unknown): void => {
    interception.end(Status.OK, '');
    settle.ok(value);
  };
  const failWith = (err: unknown): void => {
    const error = serviceError(err, call.method, logger);
    interception.end(error.code as StatusCode, error.details);
    settle.fail(err);
  };
  const go = (): void => {
    let result: unknown;
    try {
      result = run();
    } catch (err) {
      failWith(err);
      return;
    }
    if (isThenable(result)) result.then(succeed, failWith);
    else succeed(result);
  };
  if (interceptors.length === 0) go();
  else interception.start().then(go, failWith);
}

/** The request grpc-js decoded; a request that did not decode throws its error in the handler's turn (UndecodedRequest). */
function requestOf(surface: { readonly request: unknown }): unknown {
  const request = surface.request;
  if (request instanceof UndecodedRequest) throw request.error;
  return request;
}

function unaryHandler(path: string, handler: UnaryHandler<unknown, unknown>, interceptors: readonly ServerInterceptor[], logger: Logger) {
  return (surface: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
    const call = new GrpcJsCall(path, surface);
    runCall(call, surface, interceptors, logger, () => handler(requestOf(surface), call), {
      ok: (value) => callback(null, value, toGrpcMetadata(call.trailers)),
      fail: (err) => callback(serviceError(err, path, silentErrors, call.trailers)),
    });
  };
}

function clientStreamHandler(path: string, handler: ClientStreamHandler<unknown, unknown>, interceptors: readonly ServerInterceptor[], logger: Logger) {
  return (surface: ServerReadableStream<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
    const call = new GrpcJsCall(path, surface);
    runCall(call, surface, interceptors, logger, () => handler(requestsOf(surface), call), {
      ok: (value) => callback(null, value, toGrpcMetadata(call.trailers)),
      fail: (err) => callback(serviceError(err, path, silentErrors, call.trailers)),
    });
  };
}

/** Writes with backpressure: resolves once grpc-js's stream takes more; rejects when the call is gone. */
function responseWriter(surface: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>, method: string) {
  return {
    write(message: unknown): Promise<void> {
      if (surface.cancelled || surface.writableEnded) return Promise.reject(new GrpcStatusError(Status.CANCELLED, `${method}: the call has ended`));
      if (surface.write(message)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const onDrain = (): void => {
          surface.off('cancelled', onCancel);
          resolve();
        };
        const onCancel = (): void => {
          surface.off('drain', onDrain);
          reject(new GrpcStatusError(Status.CANCELLED, `${method}: cancelled`));
        };
        surface.once('drain', onDrain);
        surface.once('cancelled', onCancel);
      });
    },
  };
}

function streamingSettle(surface: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>, call: GrpcJsCall): Settle {
  return {
    ok: () => {
      if (!surface.cancelled) surface.end(toGrpcMetadata(call.trailers));
    },
    fail: (err) => {
      if (!surface.cancelled) surface.emit('error', serviceError(err, call.method, silentErrors, call.trailers));
    },
  };
}

/** The first logging happens in runCall; settling only maps the error again. */
const silentErrors: Logger = { info() {}, warn() {}, error() {} };

function serverStreamHandler(path: string, handler: ServerStreamHandler<unknown, unknown>, interceptors: readonly ServerInterceptor[], logger: Logger) {
  return (surface: ServerWritableStream<unknown, unknown>): void => {
    const call = new GrpcJsCall(path, surface);
    runCall(call, surface, interceptors, logger, () => handler(requestOf(surface), responseWriter(surface, path), call), streamingSettle(surface, call));
  };
}

function bidiHandler(path: string, handler: BidiStreamHandler<unknown, unknown>, interceptors: readonly ServerInterceptor[], logger: Logger) {
  return (surface: ServerDuplexStream<unknown, unknown>): void => {
    const call = new GrpcJsCall(path, surface);
    runCall(call, surface, interceptors, logger, () => handler(requestsOf(surface), responseWriter(surface, path), call), streamingSettle(surface, call));
  };
}

function grpcJsHandler(method: MethodDefinition<unknown, unknown>, handler: Handler, interceptors: readonly ServerInterceptor[], logger: Logger) {
  if (method.requestStream) {
    return method.responseStream
      ? bidiHandler(method.path, handler as BidiStreamHandler<unknown, unknown>, interceptors, logger)
      : clientStreamHandler(method.path, handler as ClientStreamHandler<unknown, unknown>, interceptors, logger);
  }
  return method.responseStream
    ? serverStreamHandler(method.path, handler as ServerStreamHandler<unknown, unknown>, interceptors, logger)
    : unaryHandler(method.path, handler as UnaryHandler<unknown, unknown>, interceptors, logger);
}

/**
 * Adds a transport-neutral service to a grpc-js `Server`: every method of `definition`
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
  definition: ServiceDefinition,
  implementation: ServiceImplementation,
  options: GrpcJsServiceOptions = {},
): void {
  const interceptors = checkInterceptors(options.interceptors);
  const logger = options.logger ?? createStderrLogger();
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
    handlers[name] = grpcJsHandler(method, handler, interceptors, logger) as UntypedServiceImplementation[string];
  }
  server.addService(grpcDefinition as Parameters<Server['addService']>[0], handlers);
}
