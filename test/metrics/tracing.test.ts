/** The span queue as Prometheus metrics (src/metrics/tracing.ts): drops by reason, and the queue's length now. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerTracingMetrics } from '../../src/metrics/tracing.js';

describe('registerTracingMetrics', () => {
  it('shows the queue as it is at each scrape', async () => {
    const registry = new Registry();
    const queue = { length: 3, drops: { queueFull: 5, exportFailed: 2 } };
    registerTracingMetrics(registry, queue);
    const samples = async () => (await registry.metrics()).split('\n').filter((line) => line.startsWith('jwt_grpc_'));
    expect(await samples()).toEqual([
      'jwt_grpc_tracing_spans_dropped_total{reason="queue_full"} 5',
      'jwt_grpc_tracing_spans_dropped_total{reason="export_failed"} 2',
      'jwt_grpc_tracing_queue_spans 3',
    ]);
    queue.length = 0;
    queue.drops.exportFailed = 9;
    expect(await samples()).toContain('jwt_grpc_tracing_queue_spans 0');
    expect(await samples()).toContain('jwt_grpc_tracing_spans_dropped_total{reason="export_failed"} 9');
  });
});
