/**
 * jwt-grpc's own pipeline (`tracing: true`, `--otel`) keeps memory bounded when the
 * collector is down: the batch queue never holds more than OTEL_BSP_MAX_QUEUE_SIZE spans,
 * and the spans it drops are counted (Prometheus `jwt_grpc_tracing_spans_dropped_total`,
 * OTel `jwt_grpc.tracing.spans.dropped`), as are those whose export failed.
 *
 * The counts are exact, no tolerance: the spans end while no export can complete (the sink
 * never answers, so the one batch the processor sent stays in flight, and it sends one at
 * a time), so the excess is the spans made less the queue's limit less that one batch.
 */
import { type Server, type Socket, createServer as createTcpServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, credentials } from '@grpc/grpc-js';
import { ROOT_CONTEXT, context, createContextKey, metrics, trace } from '@opentelemetry/api';
import { type DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createJwtServer, silentLogger } from '../../src/lib/index.js';
import { DROPPED_SPANS_METRIC, type OwnTracingPipeline, tracingPipelineFromEnv } from '../../src/tracing/sdk.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';
import { waitUntil } from '../../bench/kit/wait.js';

/** A collector that accepts connections and never answers. */
class SilentSink {
  readonly #sockets = new Set<Socket>();
  readonly #server: Server = createTcpServer((socket) => {
    this.#sockets.add(socket);
    socket.on('error', () => undefined);
    socket.resume();
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** A reader collected on demand. */
class TestReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const silent = new SilentSink();
let silentEndpoint: string;
const pipelines: OwnTracingPipeline[] = [];

/** The data points of the metric named `name`, as collected now. */
async function points(name: string): Promise<DataPoint<number>[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<number>[];
}

/** Our own pipeline, with the exporter's variables (read from process.env by the exporter) set to `env`. */
function pipeline(env: Record<string, string>): OwnTracingPipeline {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const made = tracingPipelineFromEnv(process.env);
  pipelines.push(made);
  return made;
}

beforeAll(async () => {
  metrics.setGlobalMeterProvider(meterProvider);
  silentEndpoint = await silent.listen();
});
afterEach(async () => {
  await Promise.all(pipelines.splice(0).map((made) => made.shutdown(100)));
  await closeAllServers();
  vi.unstubAllEnvs();
});
afterAll(async () => {
  metrics.disable();
  context.disable();
  await meterProvider.shutdown();
  await silent.close();
});

describe('tracing: true in a process with no context manager', () => {
  it("registers one, so that handlers run with their call's span active, on every transport", async () => {
    const key = createContextKey('probe');
    expect(context.with(ROOT_CONTEXT.setValue(key, 1), () => context.active().getValue(key))).toBeUndefined();
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', silentEndpoint);
    for (const transport of TRANSPORTS) {
      const server = trackServer(createJwtServer({ transport, logger: silentLogger, tracing: true, health: false, reflection: false }));
      let active: { recording: boolean; name: unknown } | undefined;
      const bytes = (b: Buffer): Buffer => b;
      server.addService(
        {
          Hello: {
            path: '/demo.Greeter/Hello',
            requestStream: false,
            responseStream: false,
            requestDeserialize: bytes,
            responseSerialize: bytes,
          },
        },
        {
          Hello: () => {
            const span = trace.getActiveSpan();
            active = { recording: span?.isRecording() ?? false, name: (span as unknown as { name?: unknown } | undefined)?.name };
            return Buffer.alloc(0);
          },
        },
      );
      const port = await server.listen('127.0.0.1:0');
      const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
      await new Promise((resolve, reject) =>
        client.makeUnaryRequest('/demo.Greeter/Hello', bytes, bytes, Buffer.alloc(0), (e, r) => (e ? reject(e) : resolve(r))),
      );
      client.close();
      expect({ transport, active }).toEqual({ transport, active: { recording: true, name: 'demo.Greeter/Hello' } });
    }
  });
});

describe('the batch queue of tracing: true, with a collector that never answers', () => {
  it('holds at OTEL_BSP_MAX_QUEUE_SIZE, and every span past it is counted dropped', async () => {
    const { provider, queue } = pipeline({
      OTEL_EXPORTER_OTLP_ENDPOINT: silentEndpoint,
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50',
      OTEL_BSP_SCHEDULE_DELAY: '60000',
      OTEL_BSP_EXPORT_TIMEOUT: '60000',
    });
    const tracer = provider.getTracer('test');
    const made = 5000;
    for (let i = 0; i < made; i++) {
      tracer.startSpan('work').end();
      expect(queue.length).toBeLessThanOrEqual(100);
    }
    // The first 50 left as a batch (in flight for good), 100 wait, the rest were refused.
    expect(queue.length).toBe(100);
    expect(queue.drops.queueFull).toBe(made - 100 - 50);
    expect(queue.drops.exportFailed).toBe(0);

    // The OTel metric says the same, and the SDK's own view of its queue agrees: 100 queued, none dropped by it.
    const dropped = await points(DROPPED_SPANS_METRIC);
    expect(dropped.find((p) => p.attributes['reason'] === 'queue_full')?.value).toBe(made - 150);
    expect((await points('otel.sdk.processor.span.queue.size')).map((p) => p.value)).toContain(100);
    const sdkDrops = (await points('otel.sdk.processor.span.processed')).filter((p) => p.attributes['error.type'] === 'queue_full');
    expect(sdkDrops.reduce((sum, p) => sum + p.value, 0)).toBe(0);
  });

  it('a batch whose export fails is counted as export_failed', async () => {
    const refusing = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(400).end());
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const { provider, queue } = pipeline({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`,
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
        OTEL_BSP_SCHEDULE_DELAY: '60000',
      });
      const tracer = provider.getTracer('test');
      for (let i = 0; i < 10; i++) tracer.startSpan('work').end();
      await waitUntil(() => queue.drops.exportFailed > 0, 5000, 10);
      expect(queue.drops).toEqual({ queueFull: 0, exportFailed: 10 });
      expect(queue.length).toBe(0);
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });

  it('refuses OTEL_BSP_* values that are not positive integers, or a batch larger than the queue', () => {
    expect(() => tracingPipelineFromEnv({ OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE.*positive integer/);
    expect(() => tracingPipelineFromEnv({ OTEL_BSP_SCHEDULE_DELAY: '5s' })).toThrow(/OTEL_BSP_SCHEDULE_DELAY.*positive integer/);
    expect(() => tracingPipelineFromEnv({ OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' })).toThrow(
      /OTEL_BSP_MAX_EXPORT_BATCH_SIZE.*must not exceed OTEL_BSP_MAX_QUEUE_SIZE \(10\)/,
    );
  });
});

describe.each(TRANSPORTS)('a server with tracing: true on transport %s', (transport) => {
  it('counts the spans its calls lost in jwt_grpc_tracing_spans_dropped_total', async () => {
    for (const [name, value] of Object.entries({
      OTEL_EXPORTER_OTLP_ENDPOINT: silentEndpoint,
      OTEL_BSP_MAX_QUEUE_SIZE: '4',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2',
      OTEL_BSP_SCHEDULE_DELAY: '60000',
      OTEL_BSP_EXPORT_TIMEOUT: '60000',
    })) {
      vi.stubEnv(name, value);
    }
    const registry = new Registry();
    const server = trackServer(
      createJwtServer({
        transport,
        keys: await sharedKeys(),
        subjects: ['ada@example.com'],
        logger: silentLogger,
        tracing: true,
        metricsRegistry: registry,
      }),
    );
    const port = await server.listen('127.0.0.1:0');
    const clients = new ClientPool();
    const calls = 10;
    for (let i = 0; i < calls; i++) await clients.jwt(port).generateJwt({ algorithm: 'HS256' });
    clients.closeAll();
    // Two spans a call (the server span, jwt.sign): 2 left as the batch in flight, 4 wait, the rest dropped.
    const expected = 2 * calls - 2 - 4;
    const dropped = async () => await registry.getSingleMetricAsString('jwt_grpc_tracing_spans_dropped_total');
    await expect.poll(dropped).toContain(`jwt_grpc_tracing_spans_dropped_total{reason="queue_full"} ${expected}`);
    expect(await dropped()).toContain('jwt_grpc_tracing_spans_dropped_total{reason="export_failed"} 0');
    expect(await registry.getSingleMetricAsString('jwt_grpc_tracing_queue_spans')).toContain('jwt_grpc_tracing_queue_spans 4');
  });
});
