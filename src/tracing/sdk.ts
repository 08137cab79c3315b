/**
 * jwt-grpc's own TracerProvider for `tracing: true` (`--otel`): the OpenTelemetry SDK and
 * an OTLP exporter (HTTP with protobuf or JSON, or gRPC), optional dependencies loaded here
 * only, the exporter of the protocol chosen alone, configured by the
 * standard variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
 * OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (read by the
 * exporter), OTEL_SERVICE_NAME (default `jwt-grpc`), OTEL_RESOURCE_ATTRIBUTES, and
 * OTEL_TRACES_SAMPLER with OTEL_TRACES_SAMPLER_ARG, and the batch processor's OTEL_BSP_*
 * (the SDK 3.x leaves these to its caller). Spans are exported in batches: the queue is
 * bounded (./queue.ts), so a collector that is down costs dropped spans, counted, never memory.
 */
import { type ObservableResult, ROOT_CONTEXT, context, createContextKey, metrics } from '@opentelemetry/api';
import type { Sampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { invalidOption } from '../base/errors.js';
import { TRACER_NAME } from './names.js';
import { AdmittingProcessor, LeavingExporter, SpanQueue } from './queue.js';
import {
  otelContextAsyncHooks,
  otelResources,
  otelSdkTrace,
  otlpGrpcTraceExporter,
  otlpHttpTraceExporter,
  otlpProtoTraceExporter,
  installHint,
} from '../base/optional-deps.js';

/** The service name when OTEL_SERVICE_NAME does not give one. */
export const DEFAULT_SERVICE_NAME = 'jwt-grpc';

/** The OTLP protocols the exporters installed with jwt-grpc speak; http/protobuf is the specification's default. */
const PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
type Protocol = (typeof PROTOCOLS)[number];

/** The exporter package of each protocol, loaded only when its protocol is chosen. */
const EXPORTERS = {
  'http/protobuf': { name: '@opentelemetry/exporter-trace-otlp-proto', load: otlpProtoTraceExporter },
  'http/json': { name: '@opentelemetry/exporter-trace-otlp-http', load: otlpHttpTraceExporter },
  grpc: { name: '@opentelemetry/exporter-trace-otlp-grpc', load: otlpGrpcTraceExporter },
} as const satisfies Record<Protocol, unknown>;

/**
 * The SDK's packages and the exporter of `protocol`; an app that has not installed them
 * (optional peer dependencies) fails here, at start, with the npm command that installs them.
 */
function loadSdk(protocol: Protocol) {
  try {
    const exporter = EXPORTERS[protocol].load();
    return { sdk: otelSdkTrace(), resources: otelResources(), contextHooks: otelContextAsyncHooks(), exporter };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    const packages = [
      '@opentelemetry/sdk-trace',
      '@opentelemetry/resources',
      '@opentelemetry/context-async-hooks',
      EXPORTERS[protocol].name,
    ];
    throw invalidOption(
      'tracing',
      `true needs the OpenTelemetry SDK and its ${protocol} exporter, optional peer dependencies not installed here: ${installHint(packages)}`,
    );
  }
}

/** The ratio of a `*traceidratio` sampler: OTEL_TRACES_SAMPLER_ARG, 0 to 1, default 1. */
function samplerRatio(arg: string | undefined): number {
  if (arg === undefined || arg === '') return 1;
  const ratio = Number(arg);
  if (!(ratio >= 0 && ratio <= 1))
    throw invalidOption('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, got ${JSON.stringify(arg)}`);
  return ratio;
}

/** The sampler OTEL_TRACES_SAMPLER names; the SDK's default, parent-based always-on, without one. */
function samplerFromEnv(env: NodeJS.ProcessEnv, sdk: typeof import('@opentelemetry/sdk-trace')): Sampler {
  const name = env['OTEL_TRACES_SAMPLER'] ?? 'parentbased_always_on';
  const parentBased = (root: Sampler): Sampler => new sdk.ParentBasedSampler({ root });
  switch (name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return new sdk.TraceIdRatioBasedSampler(samplerRatio(env['OTEL_TRACES_SAMPLER_ARG']));
    case '':
    case 'parentbased_always_on':
      return parentBased(new sdk.AlwaysOnSampler());
    case 'parentbased_always_off':
      return parentBased(new sdk.AlwaysOffSampler());
    case 'parentbased_traceidratio':
      return parentBased(new sdk.TraceIdRatioBasedSampler(samplerRatio(env['OTEL_TRACES_SAMPLER_ARG'])));
    default:
      throw invalidOption(
        'OTEL_TRACES_SAMPLER',
        `must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio; got ${JSON.stringify(name)}`,
      );
  }
}

/** The batch span processor's settings: the SDK's defaults, each overridden by its OTEL_BSP_* variable. */
export const BATCH_DEFAULTS = {
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 5000,
  exportTimeoutMillis: 30_000,
} as const;

const BATCH_VARIABLES = {
  maxQueueSize: 'OTEL_BSP_MAX_QUEUE_SIZE',
  maxExportBatchSize: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  scheduledDelayMillis: 'OTEL_BSP_SCHEDULE_DELAY',
  exportTimeoutMillis: 'OTEL_BSP_EXPORT_TIMEOUT',
} as const;

type BatchSettings = { -readonly [K in keyof typeof BATCH_DEFAULTS]: number };

/** The batch processor's settings from OTEL_BSP_*: positive integers, a batch no larger than the queue. @internal */
export function batchSettingsFromEnv(env: NodeJS.ProcessEnv): BatchSettings {
  const settings: BatchSettings = { ...BATCH_DEFAULTS };
  for (const [key, variable] of Object.entries(BATCH_VARIABLES) as [keyof BatchSettings, string][]) {
    const text = env[variable];
    if (text === undefined || text.trim() === '') continue;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 1) throw invalidOption(variable, `must be a positive integer, got ${JSON.stringify(text)}`);
    settings[key] = value;
  }
  if (settings.maxExportBatchSize > settings.maxQueueSize) {
    throw invalidOption(
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
      `must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${settings.maxQueueSize}), got ${settings.maxExportBatchSize}`,
    );
  }
  return settings;
}

/** The exporters' default endpoints (the specification's): OTLP/HTTP on 4318 with its signal path, OTLP/gRPC on 4317. */
const DEFAULT_ENDPOINTS = { http: 'http://localhost:4318', grpc: 'http://localhost:4317' } as const;

/** An endpoint as it may be printed: any user:password in it masked. */
function printableEndpoint(endpoint: string): string {
  return endpoint.replace(/\/\/[^/@]*@/, '//***@');
}

/**
 * What the own pipeline will do, as the start banner says it: the exporter's protocol and
 * endpoint, the sampler and the service name, all read from the same `OTEL_*` variables
 * the exporter and {@link tracingPipelineFromEnv} read. Headers are never shown. @internal
 */
export function describeTracingFromEnv(env: NodeJS.ProcessEnv): string {
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'] || 'http/protobuf';
  const grpc = protocol === 'grpc';
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'] || (grpc ? DEFAULT_ENDPOINTS.grpc : DEFAULT_ENDPOINTS.http);
  const endpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] || (grpc ? base : `${base.replace(/\/$/, '')}/v1/traces`);
  const sampler = env['OTEL_TRACES_SAMPLER'] || 'parentbased_always_on';
  const ratio = sampler.endsWith('traceidratio') ? ` ${samplerRatio(env['OTEL_TRACES_SAMPLER_ARG'])}` : '';
  return `OTLP ${protocol} to ${printableEndpoint(endpoint)}, sampler ${sampler}${ratio}, service ${env['OTEL_SERVICE_NAME'] || DEFAULT_SERVICE_NAME}`;
}

/** jwt-grpc's own pipeline: the provider the server traces with, and its span queue. @internal */
export interface OwnTracingPipeline {
  readonly provider: TracerProvider;
  /** The queue's length and the spans lost (the Prometheus metric reads them). */
  readonly queue: SpanQueue;
  /** Flushes what is queued, giving up after `timeoutMs` ({@link FINAL_FLUSH_TIMEOUT_MS}); never rejects. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** The OTel metric of the spans lost, through the global MeterProvider (a no-op without an SDK's). */
export const DROPPED_SPANS_METRIC = 'jwt_grpc.tracing.spans.dropped';

/**
 * jwt-grpc's own pipeline, exporting over OTLP as the environment configures it: the
 * protocols of the specification (http/protobuf, http/json, grpc); asking for another
 * fails at start rather than sending nothing. @internal
 */
export function tracingPipelineFromEnv(env: NodeJS.ProcessEnv = process.env): OwnTracingPipeline {
  // The signal's own variable first, as the specification orders them.
  const variable = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[variable] || 'http/protobuf';
  if (!PROTOCOLS.includes(protocol as Protocol)) {
    throw invalidOption(variable, `must be one of ${PROTOCOLS.join(', ')}; got ${JSON.stringify(protocol)}`);
  }
  const batch = batchSettingsFromEnv(env);
  const { sdk, resources, contextHooks, exporter } = loadSdk(protocol as Protocol);
  const sampler = samplerFromEnv(env, sdk);
  useContextManager(contextHooks);
  const resource = resources
    .resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME })
    .merge(resources.detectResources({ detectors: [resources.processDetector, resources.envDetector] }));
  const queue = new SpanQueue(batch.maxQueueSize);
  const batchProcessor = new sdk.BatchSpanProcessor({
    ...batch,
    exporter: new LeavingExporter(new exporter.OTLPTraceExporter(), queue),
    // The SDK's own metrics of its queue (otel.sdk.processor.span.queue.size and the rest),
    // into the global MeterProvider: a no-op without an SDK's.
    selfObsMeterProvider: metrics.getMeterProvider(),
  });
  const provider = new sdk.TracerProvider({ resource, sampler, spanProcessors: [new AdmittingProcessor(batchProcessor, queue)] });

  const dropped = metrics.getMeter(TRACER_NAME).createObservableCounter(DROPPED_SPANS_METRIC, {
    unit: '{span}',
    description: 'Spans not exported: the queue was full, or their export failed',
  });
  const observe = (result: ObservableResult): void => {
    result.observe(queue.drops.queueFull, { reason: 'queue_full' });
    result.observe(queue.drops.exportFailed, { reason: 'export_failed' });
  };
  dropped.addCallback(observe);
  return {
    provider,
    queue,
    shutdown: (timeoutMs) => shutdownWithin(provider, timeoutMs).finally(() => dropped.removeCallback(observe)),
  };
}

/**
 * Registers the AsyncLocalStorage context manager as the process's when it has none (an
 * SDK set up by the embedding application keeps its own): without one, `context.with` is a
 * no-op, and the handlers, run in their call's span context, would see no active span.
 * Process-wide and left in place at close: other servers and clients may be using it.
 */
function useContextManager(contextHooks: typeof import('@opentelemetry/context-async-hooks')): void {
  // The API's no-op manager keeps no context: a value set in `with` is not there inside it.
  const probe = ROOT_CONTEXT.setValue(CONTEXT_PROBE, true);
  if (context.with(probe, () => context.active().getValue(CONTEXT_PROBE)) === true) return;
  context.setGlobalContextManager(new contextHooks.AsyncLocalStorageContextManager().enable());
}

const CONTEXT_PROBE = createContextKey('jwt-grpc context manager probe');

/**
 * How long closing a server waits for its own pipeline's last export. A healthy collector
 * takes milliseconds; one that is down would hold the shutdown through the exporter's
 * retries (about 8 s measured), past any grace period, for spans it cannot deliver anyway.
 */
export const FINAL_FLUSH_TIMEOUT_MS = 2000;

/** Shuts `provider` down, flushing what it holds, giving up after {@link FINAL_FLUSH_TIMEOUT_MS}; never rejects. */
function shutdownWithin(provider: TracerProvider, timeoutMs = FINAL_FLUSH_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs).unref();
  });
  // An export that fails is reported through OpenTelemetry's diag logger, not thrown.
  const shutdown = provider.shutdown().catch(() => undefined);
  return Promise.race([shutdown, gaveUp]).finally(() => clearTimeout(timer));
}
