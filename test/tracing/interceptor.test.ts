/**
 * The server's tracing interceptor (src/tracing/interceptor.ts), over fake calls: one SERVER
 * span per call named service/method, its parent from the call's metadata, the peer split
 * into address and port, the status under the conventions OTEL_SEMCONV_STABILITY_OPT_IN
 * chooses, ERROR only for the server's own failures, and the duration histograms.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { rpcConventions, tracingInterceptor } from '../../src/tracing/interceptor.js';
import { SERVER_SPAN_CONTEXT, SERVER_TRACER, recordingServerContext } from '../../src/tracing/server-context.js';
import { CallMetadata, GrpcStatus } from '../../src/contracts/handler-api.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer('test');
afterEach(() => exporter.reset());
afterAll(() => provider.shutdown());

/** A call as the interceptor sees it. */
function fakeCall(method: string, peer = '10.0.0.7:51234', metadata = new CallMetadata()) {
  const values = new Map<unknown, unknown>();
  return {
    method,
    peer,
    metadata,
    get: (key: unknown) => values.get(key),
    set: (key: unknown, value: unknown) => void values.set(key, value),
  } as never;
}

function run(interceptor: ReturnType<typeof tracingInterceptor>, call: never, status: number, details = '') {
  interceptor.onCallStart?.(call);
  interceptor.onCallEnd?.(call, { status, details, durationMs: 12 } as never);
}

describe('rpcConventions', () => {
  it.each([
    [undefined, { legacy: true, stable: false }],
    ['', { legacy: true, stable: false }],
    ['http', { legacy: true, stable: false }],
    ['http, rpc', { legacy: false, stable: true }],
    ['rpc/dup', { legacy: true, stable: true }],
  ])('%j', (optIn, conventions) => {
    expect(rpcConventions(optIn)).toEqual(conventions);
  });
});

describe('tracingInterceptor', () => {
  it('starts a SERVER span per call, named and attributed as the legacy conventions say', () => {
    const interceptor = tracingInterceptor(tracer, undefined, undefined);
    const call = fakeCall('/jwt.v1.JwtService/GenerateJwt');
    run(interceptor, call, GrpcStatus.OK);
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('jwt.v1.JwtService/GenerateJwt');
    expect(span?.kind).toBe(SpanKind.SERVER);
    expect(span?.attributes).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.v1.JwtService',
      'rpc.method': 'GenerateJwt',
      'network.peer.address': '10.0.0.7',
      'network.peer.port': 51234,
      'rpc.grpc.status_code': 0,
    });
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
    expect((call as { get(key: unknown): unknown }).get(SERVER_TRACER)).toBe(tracer);
  });

  it.each([
    ['/Svc/a/b', { 'rpc.service': 'Svc', 'rpc.method': 'a/b' }],
    // A path with no second slash (a peer may send any :path): all method, no service.
    ['/OnlyMethod', { 'rpc.service': '', 'rpc.method': 'OnlyMethod' }],
    ['/', { 'rpc.service': '', 'rpc.method': '' }],
  ])('splits %s into service and method at the second slash', (path, attributes) => {
    run(tracingInterceptor(tracer, undefined, undefined), fakeCall(path), GrpcStatus.UNIMPLEMENTED);
    expect(exporter.getFinishedSpans()[0]?.attributes).toMatchObject(attributes);
  });

  it('uses the stable conventions when opted in, naming the status and the error type', () => {
    const interceptor = tracingInterceptor(tracer, undefined, 'rpc');
    run(interceptor, fakeCall('/pkg.Svc/M', '[::1]:9000'), GrpcStatus.UNAVAILABLE, 'backend down');
    const [span] = exporter.getFinishedSpans();
    expect(span?.attributes).toEqual({
      'rpc.system.name': 'grpc',
      'rpc.method': 'pkg.Svc/M',
      'network.peer.address': '::1',
      'network.peer.port': 9000,
      'rpc.status_code': 'UNAVAILABLE',
      'error.type': 'UNAVAILABLE',
    });
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'backend down' });
  });

  it('marks only the server’s own failures as errors', () => {
    const interceptor = tracingInterceptor(tracer, undefined, undefined);
    for (const status of [
      GrpcStatus.UNAUTHENTICATED,
      GrpcStatus.INVALID_ARGUMENT,
      GrpcStatus.PERMISSION_DENIED,
      GrpcStatus.INTERNAL,
      GrpcStatus.DEADLINE_EXCEEDED,
    ]) {
      run(interceptor, fakeCall('/pkg.Svc/M'), status);
    }
    expect(exporter.getFinishedSpans().map((span) => span.status.code)).toEqual([
      SpanStatusCode.UNSET,
      SpanStatusCode.UNSET,
      SpanStatusCode.UNSET,
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
    ]);
  });

  it('continues the caller’s trace from traceparent, and keeps a peer without a port whole', () => {
    const interceptor = tracingInterceptor(tracer, undefined, undefined);
    const metadata = new CallMetadata().set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const call = fakeCall('/pkg.Svc/M', 'unix:/run/jwt.sock', metadata);
    interceptor.onCallStart?.(call);
    expect(recordingServerContext(call)).toBe((call as { get(key: unknown): unknown }).get(SERVER_SPAN_CONTEXT));
    interceptor.onCallEnd?.(call, { status: 0, details: '', durationMs: 1 } as never);
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(span?.attributes['network.peer.address']).toBe('unix:/run/jwt.sock');
    expect(span?.attributes).not.toHaveProperty('network.peer.port');
  });

  it('ends nothing for a call it did not start, and reports no context once nothing records', () => {
    const interceptor = tracingInterceptor(tracer, undefined, undefined);
    interceptor.onCallEnd?.(fakeCall('/pkg.Svc/M'), { status: 0, details: '', durationMs: 1 } as never);
    expect(exporter.getFinishedSpans()).toEqual([]);
    const call = fakeCall('/pkg.Svc/M');
    run(interceptor, call, 0);
    expect(recordingServerContext(call), 'the span has ended').toBeUndefined();
  });

  it('records the duration in ms (legacy) and in s (stable) when given a meter', async () => {
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const interceptor = tracingInterceptor(tracer, meterProvider.getMeter('test'), 'rpc/dup');
    run(interceptor, fakeCall('/pkg.Svc/M'), GrpcStatus.NOT_FOUND);
    await reader.forceFlush();
    const metrics = metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    const point = (name: string) =>
      metrics.find((m) => m.descriptor.name === name)?.dataPoints[0] as { attributes: unknown; value: { sum: number } } | undefined;
    expect(point('rpc.server.duration')).toMatchObject({
      attributes: expect.objectContaining({ 'rpc.grpc.status_code': 5 }),
      value: { sum: 12 },
    });
    expect(point('rpc.server.call.duration')).toMatchObject({
      attributes: expect.objectContaining({ 'rpc.status_code': 'NOT_FOUND' }),
      value: { sum: 0.012 },
    });
    await meterProvider.shutdown();
  });
});
