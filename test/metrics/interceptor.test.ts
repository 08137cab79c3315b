/** The metrics interceptor (src/metrics/interceptor.ts): a call's start and end counted under its method, the duration in seconds. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallMetrics } from '../../src/metrics/calls.js';
import { metricsInterceptor } from '../../src/metrics/interceptor.js';
import { CALL_PROTOCOL } from '../../src/transport/protocols/wire.js';

describe('metricsInterceptor', () => {
  it('counts each call under its method and protocol, describing a method once per protocol', async () => {
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
      const call = { method: '/pkg.Svc/M', get: () => undefined } as never;
      interceptor.onCallStart?.(call);
      interceptor.onCallEnd?.(call, { status, details: '', durationMs } as never);
    }
    // A Connect call of the same method: its own series, labelled by its protocol.
    const connectCall = { method: '/pkg.Svc/M', get: (key: unknown) => (key === CALL_PROTOCOL ? 'connect' : undefined) } as never;
    interceptor.onCallStart?.(connectCall);
    interceptor.onCallEnd?.(connectCall, { status: 0, details: '', durationMs: 1 } as never);
    expect(described).toEqual(['/pkg.Svc/M', '/pkg.Svc/M']);
    const lines = (await registry.metrics()).split('\n');
    expect(lines).toContain('grpc_server_started_total{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",protocol="grpc"} 2');
    expect(lines).toContain(
      'grpc_server_handled_total{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",protocol="grpc",grpc_code="UNAUTHENTICATED"} 1',
    );
    expect(lines).toContain(
      'grpc_server_handling_seconds_sum{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",protocol="grpc",grpc_code="UNAUTHENTICATED"} 0.8',
    );
    expect(lines).toContain(
      'grpc_server_handling_seconds_sum{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",protocol="grpc",grpc_code="OK"} 0.002',
    );
    expect(lines).toContain('grpc_server_started_total{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",protocol="connect"} 1');
    expect(lines).toContain(
      'grpc_server_handled_total{grpc_type="unary",grpc_service="pkg.Svc",grpc_method="M",protocol="connect",grpc_code="OK"} 1',
    );
  });
});
