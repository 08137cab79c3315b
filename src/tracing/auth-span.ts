/**
 * The `jwt.verify` span of jwtAuthInterceptor on a traced jwt-grpc server: a child of the
 * call's server span, covering the token's verification, and the context the verifier runs
 * in, so that a remote verifier's JWK Set fetch (a createJwtClient call) is its child in turn:
 * caller -> server span -> jwt.verify -> GetJwks, one trace. On a server that does not trace,
 * none of this runs.
 */
import type { Context, Span } from '@opentelemetry/api';
import { type CallContext, GrpcStatus, type StatusCode } from '../contracts/handler-api.js';
import { otelApi } from '../base/optional-deps.js';
import { SERVER_TRACER, recordingServerContext } from './server-context.js';

/** A started jwt.verify span and the context to verify in. */
export interface VerifySpan {
  readonly span: Span;
  readonly context: Context;
}

/**
 * Starts jwt.verify under `call`'s server span; undefined when the server does not trace
 * the call or its span does not record (not sampled): the verifier then runs in the
 * server span's context, in which the interceptors after the tracing one run, so that a
 * JWK Set fetch still carries the trace. @internal
 */
export function startVerifySpan(call: CallContext): VerifySpan | undefined {
  const tracer = call.get(SERVER_TRACER);
  // A server that does not trace the call: the API is not even loaded.
  const parent = tracer === undefined ? undefined : recordingServerContext(call);
  if (tracer === undefined || parent === undefined) return undefined;
  const span = tracer.startSpan('jwt.verify', undefined, parent);
  return { span, context: otelApi().trace.setSpan(parent, span) };
}

/** Runs `verify` in the span's context (the verifier's own calls become its children). @internal */
export function verifyIn<T>(traced: VerifySpan, verify: () => T): T {
  return otelApi().context.with(traced.context, verify);
}

/** Ends jwt.verify with the decision: valid, or refused with the status the call gets (never the token or its claims). @internal */
export function endVerifySpan(traced: VerifySpan, refusal: StatusCode | undefined): void {
  traced.span.setAttribute('jwt.valid', refusal === undefined);
  if (refusal !== undefined) traced.span.setAttribute('rpc.grpc.status_code', refusal);
  // A refused token is the caller's failure; a verifier that could not answer is ours.
  if (refusal !== undefined && refusal !== GrpcStatus.UNAUTHENTICATED) traced.span.setStatus({ code: otelApi().SpanStatusCode.ERROR });
  traced.span.end();
}
