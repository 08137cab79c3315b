/**
 * `--otel` says in the start banner where the spans go: the exporter's protocol and
 * endpoint, the sampler and the service name, from the same OTEL_* variables the pipeline
 * reads; a password in the endpoint is masked. Without --otel the banner says tracing is off.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { describeTracingFromEnv } from '../../src/tracing/sdk.js';

afterEach(() => killAll());

describe('describeTracingFromEnv', () => {
  it.each([
    [{}, 'OTLP http/protobuf to http://localhost:4318/v1/traces, sampler parentbased_always_on, service jwt-grpc'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTLP grpc to http://localhost:4317, sampler parentbased_always_on, service jwt-grpc'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:secret@collector:4318/', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25', OTEL_SERVICE_NAME: 'issuer' },
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

describe('the start banner', () => {
  it('names the exporter, endpoint and sampler with --otel, and says off without it', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' };
    const traced = await startCli(serveArgs('--otel'), { env });
    expect(traced.stdout).toContain('  tracing: OTLP http/protobuf to http://127.0.0.1:9/v1/traces, sampler parentbased_traceidratio 0.1, service jwt-grpc\n');
    const plain = await startCli(serveArgs());
    expect(plain.stdout).toContain('  tracing: off (--otel turns it on)\n');
  });
});
