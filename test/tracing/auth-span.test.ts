/**
 * The `jwt.verify` span (src/tracing/auth-span.ts): a child of the call's recording server
 * span, none without one; its outcome as attributes, ERROR only when the verifier failed,
 * not when the token was refused.
 */
import { ROOT_CONTEXT, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { endVerifySpan, startVerifySpan, verifyIn } from '../../src/tracing/auth-span.js';
import { SERVER_SPAN_CONTEXT, SERVER_TRACER } from '../../src/tracing/server-context.js';
import { GrpcStatus } from '../../src/contracts/handler-api.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer('test');
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
afterEach(() => exporter.reset());
afterAll(async () => {
  context.disable();
  await provider.shutdown();
});

/** A call whose server span is open (or none). */
function callWithServerSpan(open = true) {
  const values = new Map<unknown, unknown>();
  const server = tracer.startSpan('server');
  if (open) {
    values.set(SERVER_TRACER, tracer);
    values.set(SERVER_SPAN_CONTEXT, trace.setSpan(ROOT_CONTEXT, server));
  }
  return { call: { get: (key: unknown) => values.get(key) } as never, server };
}

describe('the verify span', () => {
  it('is a child of the server span, active while verifying, valid when nothing was refused', () => {
    const { call, server } = callWithServerSpan();
    const traced = startVerifySpan(call);
    expect(traced).toBeDefined();
    const active = verifyIn(traced!, () => trace.getActiveSpan());
    expect(active).toBe(traced!.span);
    expect(verifyIn(traced!, () => 42)).toBe(42);
    endVerifySpan(traced!, undefined);
    server.end();
    const verify = exporter.getFinishedSpans().find((span) => span.name === 'jwt.verify');
    expect(verify?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(verify?.attributes).toEqual({ 'jwt.valid': true });
    expect(verify?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records a refused token without marking an error, and a failed verifier as one', () => {
    for (const refusal of [GrpcStatus.UNAUTHENTICATED, GrpcStatus.UNAVAILABLE]) {
      const { call, server } = callWithServerSpan();
      endVerifySpan(startVerifySpan(call)!, refusal);
      server.end();
    }
    const spans = exporter.getFinishedSpans().filter((span) => span.name === 'jwt.verify');
    expect(spans.map((span) => [span.attributes, span.status.code])).toEqual([
      [{ 'jwt.valid': false, 'rpc.grpc.status_code': GrpcStatus.UNAUTHENTICATED }, SpanStatusCode.UNSET],
      [{ 'jwt.valid': false, 'rpc.grpc.status_code': GrpcStatus.UNAVAILABLE }, SpanStatusCode.ERROR],
    ]);
  });

  it('is not started without a recording server span', () => {
    const { call, server } = callWithServerSpan(false);
    expect(startVerifySpan(call)).toBeUndefined();
    server.end();
    const ended = callWithServerSpan();
    ended.server.end();
    expect(startVerifySpan(ended.call), 'the server span has ended').toBeUndefined();
  });
});
