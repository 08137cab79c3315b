/**
 * What a traced server leaves on each call for the spans other layers start (jwt.sign,
 * jwt.verify), apart from the tracing interceptor so that reading it loads no
 * OpenTelemetry: a service behind jwtAuthInterceptor that does not trace never loads the
 * API (otelApi in src/base/optional-deps.ts).
 */
import type { Context, Tracer } from '@opentelemetry/api';
import { CALL_TRACE_CONTEXT } from '../transport/call-core.js';
import { type CallContext, CallKey } from '../contracts/handler-api.js';
import { otelApi } from '../base/optional-deps.js';

/**
 * The context of a call's server span, for the spans its handler starts (jwt.sign,
 * jwt.verify); the transports run the handler, and the interceptors after this one, in
 * it, so that a user's spans and outgoing calls are its children too. @internal
 */
export const SERVER_SPAN_CONTEXT: CallKey<Context> = CALL_TRACE_CONTEXT;
/** The tracer of the server that traces the call, for spans other layers start (jwtAuthInterceptor's jwt.verify). @internal */
export const SERVER_TRACER = new CallKey<Tracer>('OpenTelemetry tracer of the server');

/**
 * The context to start a child of `call`'s server span in (jwt.sign, jwt.verify); undefined
 * when the server does not trace the call or its server span does not record (the sampler
 * dropped it). A dropped call gets no child spans: the samplers of `tracing: true` decide a
 * child as they decided its parent (by the same trace id, or by the parent's flag), so it
 * would be dropped too, and starting it costs as much as starting the server span (ids,
 * sampler, context). The handler still runs in the server span's context, which carries
 * the trace to the calls it makes. @internal
 */
export function recordingServerContext(call: Pick<CallContext, 'get'>): Context | undefined {
  const parent = call.get(SERVER_SPAN_CONTEXT);
  return parent !== undefined && otelApi().trace.getSpan(parent)?.isRecording() === true ? parent : undefined;
}
