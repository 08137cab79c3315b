/**
 * jwt-grpc's own tracing pipeline as the environment configures it (src/tracing/sdk.ts):
 * the banner's description (a password in the endpoint masked), the batch settings and the
 * sampler read from OTEL_* and refused by variable name, and the queue bound in place.
 */
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { BATCH_DEFAULTS, batchSettingsFromEnv, describeTracingFromEnv, tracingPipelineFromEnv } from '../../src/tracing/sdk.js';

describe('describeTracingFromEnv', () => {
  it.each([
    [{}, 'OTLP http/protobuf to http://localhost:4318/v1/traces, sampler parentbased_always_on, service jwt-grpc'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTLP grpc to http://localhost:4317, sampler parentbased_always_on, service jwt-grpc'],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:secret@collector:4318/',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_SERVICE_NAME: 'issuer',
      },
      'OTLP http/protobuf to https://***@collector:4318/v1/traces, sampler traceidratio 0.25, service issuer',
    ],
    [
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:9999/custom', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' },
      'OTLP http/json to http://c:9999/custom, sampler parentbased_always_on, service jwt-grpc',
    ],
  ])('%j: %s', (env, expected) => {
    expect(describeTracingFromEnv(env)).toBe(expected);
  });
});

describe('batchSettingsFromEnv', () => {
  it('takes the defaults, and positive integers from OTEL_BSP_*', () => {
    expect(batchSettingsFromEnv({})).toEqual(BATCH_DEFAULTS);
    expect(
      batchSettingsFromEnv({
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
        OTEL_BSP_SCHEDULE_DELAY: ' ',
        OTEL_BSP_EXPORT_TIMEOUT: '500',
      }),
    ).toEqual({
      maxQueueSize: 100,
      maxExportBatchSize: 10,
      scheduledDelayMillis: BATCH_DEFAULTS.scheduledDelayMillis,
      exportTimeoutMillis: 500,
    });
  });

  it.each([
    [{ OTEL_BSP_MAX_QUEUE_SIZE: '0' }, 'option OTEL_BSP_MAX_QUEUE_SIZE: must be a positive integer, got "0"'],
    [{ OTEL_BSP_SCHEDULE_DELAY: '1.5' }, 'option OTEL_BSP_SCHEDULE_DELAY: must be a positive integer, got "1.5"'],
    [{ OTEL_BSP_EXPORT_TIMEOUT: 'soon' }, 'option OTEL_BSP_EXPORT_TIMEOUT: must be a positive integer, got "soon"'],
    [
      { OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '11' },
      'option OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not exceed OTEL_BSP_MAX_QUEUE_SIZE (10), got 11',
    ],
  ])('refuses %j', (env, message) => {
    expect(() => batchSettingsFromEnv(env)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', message }));
  });
});

describe('tracingPipelineFromEnv', () => {
  it.each([
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'zipkin' },
      'option OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http/protobuf, http/json, grpc; got "zipkin"',
    ],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http' }, 'option OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be one of'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'option OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio,'],
    [
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' },
      'option OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1, got "2"',
    ],
    [{ OTEL_BSP_MAX_QUEUE_SIZE: '-1' }, 'option OTEL_BSP_MAX_QUEUE_SIZE:'],
  ])('refuses %j at start', (env, message) => {
    expect(() => tracingPipelineFromEnv(env)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: expect.stringContaining(message) }),
    );
  });

  it('shuts down within its limit when the collector is down (test/tracing/span-queue.test.ts counts the queue exactly)', async () => {
    const pipeline = tracingPipelineFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_BSP_MAX_QUEUE_SIZE: '3',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '3',
      OTEL_BSP_SCHEDULE_DELAY: '60000',
    });
    const tracer = pipeline.provider.getTracer('test');
    for (let i = 0; i < 5; i++) tracer.startSpan(`span ${i}`).end();
    const started = Date.now();
    await pipeline.shutdown(200);
    expect(Date.now() - started).toBeLessThan(2000);
    trace.disable();
  });
});
