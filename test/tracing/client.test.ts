/**
 * Client spans (src/tracing/client.ts) through a globally registered SDK: a CLIENT span per
 * call named service/method, its context injected into the call's metadata, the status as
 * an attribute, ERROR with the details for anything but OK.
 */
import { Metadata } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { endClientSpan, startClientSpan } from '../../src/tracing/client.js';
import { useGlobalTracing } from './global-sdk.js';

const { exporter, provider } = useGlobalTracing();

describe('client spans', () => {
  it('start under the active span and carry their context in traceparent', () => {
    const parent = provider.getTracer('app').startSpan('app');
    const metadata = new Metadata();
    const span = context.with(trace.setSpan(context.active(), parent), () => startClientSpan('/jwt.v1.JwtService/VerifyJwt', metadata));
    endClientSpan(span, 0, '');
    parent.end();
    const [client] = exporter.getFinishedSpans();
    expect(client?.name).toBe('jwt.v1.JwtService/VerifyJwt');
    expect(client?.kind).toBe(SpanKind.CLIENT);
    expect(client?.attributes).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.v1.JwtService',
      'rpc.method': 'VerifyJwt',
      'rpc.grpc.status_code': 0,
    });
    expect(client?.status.code).toBe(SpanStatusCode.UNSET);
    expect(client?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(metadata.get('traceparent')).toEqual([`00-${client?.spanContext().traceId}-${client?.spanContext().spanId}-01`]);
  });

  it('mark a failed call as an error with its details', () => {
    const span = startClientSpan('/OnlyMethod', new Metadata());
    endClientSpan(span, 14, 'connection refused');
    const [client] = exporter.getFinishedSpans();
    expect(client?.name).toBe('OnlyMethod');
    expect(client?.attributes['rpc.grpc.status_code']).toBe(14);
    expect(client?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'connection refused' });
  });
});
