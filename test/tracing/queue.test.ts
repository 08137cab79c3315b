/**
 * The span queue's bound (src/tracing/queue.ts): the processor admits a sampled span only
 * while the queue is under its limit, counting the rest; the exporter shortens the queue
 * as spans leave and counts those whose export failed.
 */
import { TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { AdmittingProcessor, LeavingExporter, SpanQueue } from '../../src/tracing/queue.js';

const span = (sampled = true) =>
  ({ spanContext: () => ({ traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE }) }) as unknown as ReadableSpan;

function innerProcessor() {
  const ended: ReadableSpan[] = [];
  let shutDown = 0;
  const processor: SpanProcessor = {
    onStart() {},
    onEnd: (s) => void ended.push(s),
    forceFlush: async () => {},
    shutdown: async () => void (shutDown += 1),
  };
  return { processor, ended, shutDowns: () => shutDown };
}

describe('AdmittingProcessor', () => {
  it('admits sampled spans up to the limit and counts the rest as dropped', () => {
    const queue = new SpanQueue(3);
    const inner = innerProcessor();
    const processor = new AdmittingProcessor(inner.processor, queue);
    for (let i = 0; i < 5; i++) processor.onEnd(span());
    processor.onEnd(span(false));
    expect(inner.ended).toHaveLength(3);
    expect(queue.length).toBe(3);
    expect(queue.drops.queueFull).toBe(2);
  });

  it('admits nothing after shutdown', async () => {
    const queue = new SpanQueue(3);
    const inner = innerProcessor();
    const processor = new AdmittingProcessor(inner.processor, queue);
    await processor.shutdown();
    processor.onEnd(span());
    expect(inner.ended).toHaveLength(0);
    expect(inner.shutDowns()).toBe(1);
    expect(queue.drops.queueFull).toBe(0);
  });
});

describe('LeavingExporter', () => {
  it('frees queue room as a batch leaves and counts the spans of a failed export', async () => {
    const queue = new SpanQueue(4);
    queue.length = 4;
    const results = [{ code: 0 }, { code: 1, error: new Error('collector down') }];
    const inner: SpanExporter = { export: (_spans, done) => done(results.shift() as never), shutdown: async () => {} };
    const exporter = new LeavingExporter(inner, queue);
    const seen: number[] = [];
    exporter.export([span(), span()], (result) => seen.push(result.code));
    expect(queue.length).toBe(2);
    expect(queue.drops.exportFailed).toBe(0);
    exporter.export([span(), span()], (result) => seen.push(result.code));
    expect(queue.length).toBe(0);
    expect(queue.drops.exportFailed).toBe(2);
    expect(seen).toEqual([0, 1]);
    await expect(exporter.forceFlush()).resolves.toBeUndefined();
  });

  it('lets the processor admit again once spans left', () => {
    const queue = new SpanQueue(1);
    const processor = new AdmittingProcessor(innerProcessor().processor, queue);
    const exporter = new LeavingExporter({ export: (_s, done) => done({ code: 0 }), shutdown: async () => {} }, queue);
    processor.onEnd(span());
    processor.onEnd(span());
    expect(queue.drops.queueFull).toBe(1);
    exporter.export([span()], () => undefined);
    processor.onEnd(span());
    expect(queue.drops.queueFull).toBe(1);
    expect(queue.length).toBe(1);
  });
});
