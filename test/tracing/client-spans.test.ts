/**
 * The client side: with an OpenTelemetry SDK registered in the calling process, the
 * package's client (createJwtClient, and createRemoteVerifier built on it) makes a CLIENT
 * span per call under the active span and sends its context as `traceparent`, so that a
 * caller, its call and the server's spans are one trace.
 */
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GrpcStatus } from '../../src/lib.js';
import { ClientPool, callError } from '../helpers/client.js';
import { TRANSPORTS, closeAllServers, sharedKeys, startServer } from '../helpers/server.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const contextManager = new AsyncLocalStorageContextManager().enable();

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterEach(() => exporter.reset());
afterAll(async () => {
  trace.disable();
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

/** The finished span named `name` of `kind`, waiting a moment for the server's, which ends after the client has its answer. */
async function spanOf(name: string, kind: SpanKind): Promise<ReadableSpan> {
  const find = () => exporter.getFinishedSpans().filter((span) => span.name === name && span.kind === kind);
  for (let i = 0; i < 100 && find().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(find()).toHaveLength(1);
  return find()[0] as ReadableSpan;
}

describe.each(TRANSPORTS)('createJwtClient with an SDK registered, server on transport %s', (transport) => {
  const clients = new ClientPool();
  let port: number;

  beforeAll(async () => {
    ({ port } = await startServer({ transport, keys: await sharedKeys(), subjects: ['ada@example.com'], tracing: provider }));
  });
  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  it('caller -> CLIENT span -> SERVER span -> jwt.sign, one trace', async () => {
    const jwt = clients.jwt(port);
    const caller = trace.getTracer('test');
    await caller.startActiveSpan('caller', async (span) => {
      await jwt.generateJwt({ algorithm: 'HS256' });
      span.end();
    });
    const callerSpan = await spanOf('caller', SpanKind.INTERNAL);
    const client = await spanOf('jwt.services.JwtService/GenerateJwt', SpanKind.CLIENT);
    const server = await spanOf('jwt.services.JwtService/GenerateJwt', SpanKind.SERVER);
    const sign = await spanOf('jwt.sign', SpanKind.INTERNAL);
    const traceId = callerSpan.spanContext().traceId;
    for (const span of [client, server, sign]) expect(span.spanContext().traceId).toBe(traceId);
    expect(client.parentSpanContext?.spanId).toBe(callerSpan.spanContext().spanId);
    expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
    expect(sign.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(client.attributes).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.method': 'GenerateJwt',
      'rpc.grpc.status_code': GrpcStatus.OK,
    });
  });

  it('a failed call: the CLIENT span is ERROR with the status code', async () => {
    const err = await callError(clients.jwt(port).generateJwt({ algorithm: 'NOPE' }));
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const client = await spanOf('jwt.services.JwtService/GenerateJwt', SpanKind.CLIENT);
    expect(client.attributes['rpc.grpc.status_code']).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(client.status.code).toBe(SpanStatusCode.ERROR);
  });
});
