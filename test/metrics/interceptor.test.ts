/** The metrics interceptor (src/metrics/interceptor.ts): a call's start and end counted under its method, the duration in seconds. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallMetrics } from '../../src/metrics/calls.js';
import { metricsInterceptor } from '../../src/metrics/interceptor.js';

describe('metricsInterceptor', () => {
  it('counts each call under its method, describing a method once', async () => {
    const registry = new Registry();
    const described: string[] = [];
    const interceptor = metricsInterceptor(new CallMetrics(registry), (path) => {
      described.push(path);
      return { path, requestStream: false, responseStream: false };
    });
    for (const [status, durationMs] of [
      [0, 2],
      [16, 800],
    ] as const) {
      const call = { method: '/pkg.Svc/M' } as never;
      interceptor.onCallStart?.(call);
      interceptor.onCallEnd?.(call, { status, details: '', durationMs } as never);
    }
    expect(described).toEqual(['/pkg.Svc/M']);
    const lines = (await registry.metrics()).split('\n');
    expect(lines).toContain('grpc_server_started_total{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M"} 2');
    expect(lines).toContain(
      'grpc_server_handled_total{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",grpc_code="UNAUTHENTICATED"} 1',
    );
    expect(lines).toContain(
      'grpc_server_handling_seconds_sum{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",grpc_code="UNAUTHENTICATED"} 0.8',
    );
    expect(lines).toContain(
      'grpc_server_handling_seconds_sum{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",grpc_code="OK"} 0.002',
    );
  });
});
