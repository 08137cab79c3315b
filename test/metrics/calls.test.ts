/**
 * The transport-neutral call counts (src/metrics/calls.ts) that every transport feeds:
 * what a transport reports comes out of the registry as the gRPC ecosystem's metrics.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallMetrics, HANDLING_SECONDS_BUCKETS } from '../../src/metrics/calls.js';
import { parseMetrics, valueOf } from '../ops/helpers.js';

describe('CallMetrics', () => {
  it('counts starts, ends by code, and a cumulative histogram per method and code', async () => {
    const registry = new Registry();
    const calls = new CallMetrics(registry);
    const unary = calls.method({ path: '/pkg.Svc/Unary', requestStream: false, responseStream: false });
    const bidi = calls.method({ path: '/pkg.Svc/Chat', requestStream: true, responseStream: true });
    expect(calls.method({ path: '/pkg.Svc/Unary', requestStream: false, responseStream: false }), 'one set of counts per path').toBe(unary);
    for (const seconds of [0.0001, 0.0004, 0.003, 20]) {
      unary.started();
      unary.ended(0, seconds);
    }
    unary.started();
    unary.ended(3, 0.002);
    bidi.started();
    bidi.ended(99, 0.1); // not a gRPC code: UNKNOWN
    const samples = parseMetrics(await registry.metrics());
    const ok = { grpc_type: 'unary', grpc_service: 'pkg.Svc', grpc_method: 'Unary', grpc_code: 'OK' };
    expect(valueOf(samples, 'grpc_server_started_total', { grpc_method: 'Unary' })).toBe(5);
    expect(valueOf(samples, 'grpc_server_handled_total', ok)).toBe(4);
    expect(valueOf(samples, 'grpc_server_handled_total', { ...ok, grpc_code: 'INVALID_ARGUMENT' })).toBe(1);
    expect(valueOf(samples, 'grpc_server_handled_total', { grpc_type: 'bidi_stream', grpc_method: 'Chat', grpc_code: 'UNKNOWN' })).toBe(1);
    expect(valueOf(samples, 'grpc_server_handling_seconds_bucket', { ...ok, le: '0.00025' })).toBe(1);
    expect(valueOf(samples, 'grpc_server_handling_seconds_bucket', { ...ok, le: '0.0005' })).toBe(2);
    expect(valueOf(samples, 'grpc_server_handling_seconds_bucket', { ...ok, le: '0.005' })).toBe(3);
    expect(valueOf(samples, 'grpc_server_handling_seconds_bucket', { ...ok, le: String(HANDLING_SECONDS_BUCKETS.at(-1)) })).toBe(3);
    expect(valueOf(samples, 'grpc_server_handling_seconds_bucket', { ...ok, le: '+Inf' })).toBe(4);
    expect(valueOf(samples, 'grpc_server_handling_seconds_count', ok)).toBe(4);
    expect(valueOf(samples, 'grpc_server_handling_seconds_sum', ok)).toBeCloseTo(20.0035, 6);
  });
});
