/**
 * CLIENT spans for the package's own client (createJwtClient, and what is built on it:
 * jwtCallCredentials' token fetches, createRemoteVerifier's JWK Set fetches), through the
 * global OpenTelemetry API: when the calling process has registered an SDK, each call is a
 * CLIENT span, child of the active span, and its context goes out as metadata through the
 * registered propagator (`traceparent` with the W3C one). Without an SDK registered there
 * is no span, and the API is not loaded (otelRegistered in src/base/optional-deps.ts).
 */
import type { Metadata } from '@grpc/grpc-js';
import type { Attributes, Span, SpanKind } from '@opentelemetry/api';
import { otelApi, otelRegistered } from '../base/optional-deps.js';
import { TRACER_NAME, splitPath } from './names.js';

const metadataSetter = { set: (carrier: Metadata, key: string, value: string) => carrier.set(key, value) };

/** The span name and options of each method called, made once: a client calls few methods, many times. */
const methodSpans = new Map<string, { readonly name: string; readonly options: { kind: SpanKind; attributes: Attributes } }>();

function methodSpan(path: string) {
  let known = methodSpans.get(path);
  if (known === undefined) {
    const { service, method } = splitPath(path);
    known = {
      name: service === '' ? method : `${service}/${method}`,
      options: { kind: otelApi().SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method } },
    };
    methodSpans.set(path, known);
  }
  return known;
}

/**
 * Starts the CLIENT span of a call to `path` and puts its context into `metadata`;
 * undefined, with nothing loaded, while the app has registered no SDK. @internal
 */
export function startClientSpan(path: string, metadata: Metadata): Span | undefined {
  if (!otelRegistered()) return undefined;
  const { context, propagation, trace } = otelApi();
  const { name, options } = methodSpan(path);
  const parent = context.active();
  // The API's proxy tracer follows a TracerProvider registered later.
  const span = trace.getTracer(TRACER_NAME).startSpan(name, options, parent);
  propagation.inject(trace.setSpan(parent, span), metadata, metadataSetter);
  return span;
}

/** Ends a CLIENT span with the call's status: any status but OK is an error of the call, as the RPC conventions say of clients. @internal */
export function endClientSpan(span: Span | undefined, status: number, details: string): void {
  if (span === undefined) return;
  span.setAttribute('rpc.grpc.status_code', status);
  if (status !== 0) span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: details });
  span.end();
}
