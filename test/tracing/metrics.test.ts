/**
 * With tracing on and a MeterProvider registered in the process, each call's duration is
 * recorded through the OpenTelemetry metrics API, on both transports: `rpc.server.duration`
 * (ms) with the attributes instrumentation-grpc's conventions use, and
 * `rpc.server.call.duration` (s) with the stable ones when OTEL_SEMCONV_STABILITY_OPT_IN asks.
 */
import { metrics } from '@opentelemetry/api';
import { type HistogramMetricData, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GrpcStatus } from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';

/** A reader collected on demand. */
class TestReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const tracerProvider = new TracerProvider();

/** The histogram named `name` as collected now, or undefined. */
async function histogram(name: string): Promise<HistogramMetricData | undefined> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === name) as
    | HistogramMetricData
    | undefined;
}

beforeAll(() => metrics.setGlobalMeterProvider(meterProvider));
afterEach(async () => {
  vi.unstubAllEnvs();
  await closeAllServers();
});
afterAll(async () => {
  metrics.disable();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

describe.each(TRANSPORTS)('call durations on transport %s', (transport) => {
  it('rpc.server.duration in ms, by method and status code', async () => {
    const { port } = await startServer({ transport, keys: await sharedKeys(), subjects: ['ada@example.com'], tracing: tracerProvider });
    const clients = new ClientPool();
    await clients.jwt(port).generateJwt({ algorithm: 'HS256' });
    await clients.jwt(port).generateJwt({ algorithm: 'HS256' });
    clients.closeAll();
    const metric = await histogram('rpc.server.duration');
    expect(metric?.descriptor.unit).toBe('ms');
    const point = metric?.dataPoints.find(
      (p) => p.attributes['rpc.method'] === 'GenerateJwt' && p.attributes['rpc.service'] === 'jwt.services.JwtService',
    );
    expect(point?.attributes).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.method': 'GenerateJwt',
      'rpc.grpc.status_code': GrpcStatus.OK,
    });
    expect(point?.value.count).toBeGreaterThanOrEqual(2);
  });

  it('rpc.server.call.duration in s with OTEL_SEMCONV_STABILITY_OPT_IN=rpc', async () => {
    vi.stubEnv('OTEL_SEMCONV_STABILITY_OPT_IN', 'rpc');
    const { port } = await startServer({ transport, keys: await sharedKeys(), subjects: ['ada@example.com'], tracing: tracerProvider });
    const clients = new ClientPool();
    await clients.jwt(port).verifyJwt({ jwt: 'not-a-token' });
    clients.closeAll();
    const metric = await histogram('rpc.server.call.duration');
    expect(metric?.descriptor.unit).toBe('s');
    const point = metric?.dataPoints.find((p) => p.attributes['rpc.method'] === 'jwt.services.JwtService/VerifyJwt');
    expect(point?.attributes).toEqual({
      'rpc.system.name': 'grpc',
      'rpc.method': 'jwt.services.JwtService/VerifyJwt',
      'rpc.status_code': 'OK',
    });
    expect(point?.value.max).toBeLessThan(10);
  });
});
