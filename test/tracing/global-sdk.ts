/**
 * An OpenTelemetry SDK registered globally for one test file, as an application that traces
 * would have it: a TracerProvider with an in-memory exporter, the AsyncLocalStorage context
 * manager and the W3C propagator, set before the file's tests and removed after them.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll } from 'vitest';

/** Registers the SDK for the calling file's tests; the exporter is emptied after each test. */
export function useGlobalTracing(): { readonly exporter: InMemorySpanExporter; readonly provider: TracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(contextManager);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  });
  return { exporter, provider };
}
