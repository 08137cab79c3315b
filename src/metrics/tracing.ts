/**
 * The Prometheus side of jwt-grpc's own tracing pipeline (`--otel` with `--metrics-port`):
 * the spans it lost, and its queue, computed at scrape time from the queue's counts.
 */
import type { Registry } from 'prom-client';
import { registerComputed } from './computed.js';

/** What the pipeline's span queue counts (src/tracing/queue.ts's SpanQueue). */
export interface SpanQueueCounts {
  readonly length: number;
  readonly drops: { readonly queueFull: number; readonly exportFailed: number };
}

/** Registers the pipeline's metrics for `queue` in `registry`. @internal */
export function registerTracingMetrics(registry: Registry, queue: SpanQueueCounts): void {
  registerComputed(registry, {
    name: 'jwt_grpc_tracing_spans_dropped_total',
    help: 'Spans not exported: reason queue_full (the batch queue held OTEL_BSP_MAX_QUEUE_SIZE already) or export_failed (the collector was down or refused them).',
    type: 'counter',
    samples: () => [
      { labels: { reason: 'queue_full' }, value: queue.drops.queueFull },
      { labels: { reason: 'export_failed' }, value: queue.drops.exportFailed },
    ],
  });
  registerComputed(registry, {
    name: 'jwt_grpc_tracing_queue_spans',
    help: 'Finished spans waiting in the batch queue for export (at most OTEL_BSP_MAX_QUEUE_SIZE).',
    type: 'gauge',
    samples: () => [{ labels: {}, value: queue.length }],
  });
}
