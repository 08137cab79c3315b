/**
 * What a gRPC call means on any transport: the handler's side of the call, apart from the
 * protocol call that carries it (as grpc-node keeps them apart). Each transport's call
 * extends {@link CallCore} and supplies the wire side: how the status is sent, and whether
 * the call can still end. The core decides the rest, once for both transports:
 *
 * - interceptors: every `onCallStart` in order before the handler (synchronously while
 *   they answer synchronously), every `onCallEnd` once when the status is decided;
 * - errors to statuses: a {@link GrpcStatusError} as it says, anything else INTERNAL, logged;
 * - a request that did not deserialize: the deserializer's own status, else INTERNAL;
 * - the values interceptors attach (`call.set`/`call.get`) and the trailers a handler adds;
 * - the OpenTelemetry context the handler runs in: the one an interceptor attached as
 *   {@link CALL_TRACE_CONTEXT} (the tracing interceptor's server span), so that the spans
 *   a handler starts and the calls it makes are that span's children.
 *
 * Built for the unary path: nothing here allocates per call unless a handler or an
 * interceptor asks for it (the values map, the trailers, an async onCallStart's promise).
 */
import { performance } from 'node:perf_hooks';
import type { Context } from '@opentelemetry/api';
import type { Logger } from '../base/log.js';
import { otelApi } from '../base/optional-deps.js';
import {
  type CallContext,
  type CallerIdentity,
  CallKey,
  type CallOutcome,
  GrpcStatusError,
  CallMetadata,
  type ResponseCompression,
  type CallInterceptor,
  GrpcStatus,
  type StatusCode,
  isThenable,
} from '../contracts/handler-api.js';

/** What every call of a server shares with the core: its interceptors and where failures are logged. */
export interface CallSettings {
  readonly interceptors: readonly CallInterceptor[];
  readonly logger: Logger;
}

/**
 * The OpenTelemetry context a call's handler, and the interceptors after the one that
 * attaches it, run in: the tracing interceptor's server span. Without it (tracing off)
 * they run in the context they were called in. @internal
 */
export const CALL_TRACE_CONTEXT = new CallKey<Context>('OpenTelemetry context of the call');

/** A status code a handler may end a call with; anything else is reported as UNKNOWN. */
function validStatus(code: unknown): code is StatusCode {
  return typeof code === 'number' && Number.isInteger(code) && code >= 1 && code <= 16;
}

/**
 * The status of a request `requestDeserialize` could not read: the GrpcStatusError it
 * threw (INVALID_ARGUMENT for a malformed message), else INTERNAL, as the gRPC status
 * code document says of an error parsing the request.
 */
export function deserializeError(err: unknown, method: string): GrpcStatusError {
  if (err instanceof GrpcStatusError) return err;
  return new GrpcStatusError(
    GrpcStatus.INTERNAL,
    `could not parse the request message of ${method}: ${(err as Error)?.message ?? String(err)}`,
  );
}

/** The handler's call, whichever transport carries it; a transport's call extends it. */
export abstract class CallCore implements CallContext {
  readonly method: string;
  abstract readonly metadata: CallMetadata;
  abstract readonly deadline: number;
  abstract readonly signal: AbortSignal;
  abstract readonly peer: string;
  abstract readonly caller: CallerIdentity | undefined;
  /** Trailers a handler or interceptor added (setTrailers); sent with the status. */
  protected trailers: CallMetadata | undefined = undefined;
  /** While an async onCallStart is pending: resolves true when the call may go on. */
  protected gate: Promise<boolean> | undefined = undefined;
  protected readonly settings: CallSettings;
  #values: Map<CallKey<unknown>, unknown> | undefined = undefined;
  #startedAt = 0;
  #endReported = false;

  constructor(method: string, settings: CallSettings) {
    this.method = method;
    this.settings = settings;
  }

  abstract sendMetadata(metadata: CallMetadata): void;
  abstract setResponseCompression(encoding: ResponseCompression): void;

  /** True while the call's status is still open (not sent, the call not cancelled). */
  protected abstract mayEnd(): boolean;
  /** Sends `status` (with `metadata` added to the trailers); then calls {@link finished}. */
  protected abstract endWithStatus(status: StatusCode, details: string, metadata: CallMetadata | undefined): void;
  /** Answers with what a handler that answers once returned (for a streaming response: ends OK). */
  protected abstract respond(response: unknown): void;

  setTrailers(metadata: CallMetadata): void {
    const trailers = (this.trailers ??= new CallMetadata());
    for (const [key, values] of metadata.entries()) for (const value of values) trailers.add(key, value);
  }

  get<T>(key: CallKey<T>): T | undefined {
    return this.#values?.get(key) as T | undefined;
  }

  set<T>(key: CallKey<T>, value: T): void {
    (this.#values ??= new Map()).set(key, value);
  }

  /**
   * Calls `run(arg)` (the transport's handler runner, `this` bound) inside the call's
   * {@link CALL_TRACE_CONTEXT}; directly without one. Tracing off, that costs a field
   * read and no allocation.
   */
  protected inCallContext<A>(run: (this: this, arg: A) => void, arg: A): void {
    const active = this.#values?.get(CALL_TRACE_CONTEXT) as Context | undefined;
    if (active === undefined) run.call(this, arg);
    // Only a traced call has one: its server loaded the API already.
    else otelApi().context.with(active, run, this, arg);
  }

  /** Runs one interceptor's onCallStart, inside the call's context once an earlier interceptor attached one. */
  #callStart(onCallStart: NonNullable<CallInterceptor['onCallStart']>): void | Promise<void> {
    const active = this.#values?.get(CALL_TRACE_CONTEXT) as Context | undefined;
    return active === undefined ? onCallStart(this) : otelApi().context.with(active, onCallStart, undefined, this);
  }

  /** Ends the call with `err` as its status: a GrpcStatusError as it says, anything else INTERNAL (logged). */
  fail(err: unknown): void {
    if (!this.mayEnd()) return;
    if (err instanceof GrpcStatusError) {
      this.endWithStatus(validStatus(err.status) ? err.status : GrpcStatus.UNKNOWN, err.details, err.metadata);
      return;
    }
    this.settings.logger.error(`${this.method} failed`, { error: err instanceof Error ? err.message : String(err) });
    this.endWithStatus(GrpcStatus.INTERNAL, `${this.method}: internal error`, undefined);
  }

  /** Ends the call with what a handler returned: its response, or the error it rejects with. */
  protected settle(result: unknown): void {
    if (isThenable(result)) {
      result.then(
        (response) => this.respond(response),
        (err: unknown) => this.fail(err),
      );
    } else {
      this.respond(result);
    }
  }

  /**
   * Runs the interceptors' onCallStart hooks; false when one refused the call
   * synchronously (its status is sent). When one is async, {@link gate} holds the rest.
   */
  protected startInterceptors(): boolean {
    const interceptors = this.settings.interceptors;
    if (interceptors.length === 0) return true;
    this.#startedAt = performance.now();
    for (let i = 0; i < interceptors.length; i++) {
      const onCallStart = interceptors[i]?.onCallStart;
      if (onCallStart === undefined) continue;
      let result: unknown;
      try {
        result = this.#callStart(onCallStart);
      } catch (err) {
        this.fail(err);
        return false;
      }
      if (isThenable(result)) {
        this.gate = this.#continueInterceptors(result, i + 1);
        return true;
      }
    }
    return true;
  }

  async #continueInterceptors(pending: PromiseLike<unknown>, next: number): Promise<boolean> {
    const interceptors = this.settings.interceptors;
    try {
      await pending;
      for (let i = next; i < interceptors.length && this.mayEnd(); i++) {
        const onCallStart = interceptors[i]?.onCallStart;
        if (onCallStart !== undefined) await this.#callStart(onCallStart);
      }
    } catch (err) {
      this.fail(err);
      return false;
    }
    return this.mayEnd();
  }

  /** Runs `next` once the interceptors' onCallStart have let the call through. */
  protected whenStarted(next: () => void): void {
    const gate = this.gate;
    if (gate === undefined) {
      next();
      return;
    }
    void gate.then((proceed) => {
      if (proceed && this.mayEnd()) next();
    });
  }

  /** The status is decided (sent, or the call cancelled): the interceptors' onCallEnd run, once. */
  protected finished(status: StatusCode, details: string): void {
    const interceptors = this.settings.interceptors;
    if (interceptors.length === 0 || this.#endReported) return;
    this.#endReported = true;
    const outcome: CallOutcome = { status, details, durationMs: performance.now() - this.#startedAt };
    for (const interceptor of interceptors) {
      try {
        interceptor.onCallEnd?.(this, outcome);
      } catch (err) {
        this.settings.logger.error(`${this.method}: interceptor onCallEnd failed`, { error: (err as Error)?.message ?? String(err) });
      }
    }
  }
}
