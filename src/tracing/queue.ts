/**
 * The span queue of jwt-grpc's own pipeline, bounded and its losses counted. The SDK's
 * BatchSpanProcessor bounds its queue (`maxQueueSize`) but drops past it without a count
 * anyone can read (@opentelemetry/sdk-trace 3.x: `_addToBuffer` bumps a private counter and
 * logs through `diag` at debug level). So the batch processor is wrapped on both sides:
 *
 * - before it, {@link AdmittingProcessor} lets a finished span in only while fewer than
 *   `maxQueueSize` are queued, and counts the rest as dropped (`queue_full`): the batch
 *   processor itself never reaches its limit, and the count is exact;
 * - after it, {@link LeavingExporter} sees each batch leave the queue (the processor hands
 *   the exporter the spans it took out), and counts a batch whose export failed
 *   (`export_failed`: the collector was down or refused it, after the exporter's retries).
 */
import { type Context, TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

/** ExportResultCode.SUCCESS of @opentelemetry/core (an optional dependency this module does not load). */
const EXPORT_SUCCESS = 0;

/** Spans jwt-grpc's own pipeline lost, by reason; the metrics read these. */
export class SpanDrops {
  /** Finished spans refused because the queue held `maxQueueSize` already. */
  queueFull = 0;
  /** Spans of batches whose export failed. */
  exportFailed = 0;
}

/** The spans in the batch processor's queue, and what was lost. @internal */
export class SpanQueue {
  /** Spans admitted and not yet handed to the exporter: never more than `maxQueueSize`. */
  length = 0;
  readonly drops = new SpanDrops();

  constructor(readonly maxQueueSize: number) {}
}

/** The exporter as the batch processor sees it: a batch it is handed has left the queue. @internal */
export class LeavingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #queue: SpanQueue;

  constructor(inner: SpanExporter, queue: SpanQueue) {
    this.#inner = inner;
    this.#queue = queue;
  }

  export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter['export']>[1]): void {
    const queue = this.#queue;
    queue.length -= spans.length;
    this.#inner.export(spans, (result) => {
      if (result.code !== EXPORT_SUCCESS) queue.drops.exportFailed += spans.length;
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** In front of the batch processor: admits a finished span while the queue has room, counts it dropped otherwise. @internal */
export class AdmittingProcessor implements SpanProcessor {
  readonly #inner: SpanProcessor;
  readonly #queue: SpanQueue;
  #shutDown = false;

  constructor(inner: SpanProcessor, queue: SpanQueue) {
    this.#inner = inner;
    this.#queue = queue;
  }

  onStart(span: Span, parentContext: Context): void {
    this.#inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    // The batch processor ignores these too: they never enter its queue.
    if (this.#shutDown || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    const queue = this.#queue;
    if (queue.length >= queue.maxQueueSize) {
      queue.drops.queueFull++;
      return;
    }
    queue.length++;
    this.#inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    this.#shutDown = true;
    return this.#inner.shutdown();
  }
}
