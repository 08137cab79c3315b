/**
 * `--otel` says in the start banner where the spans go, as describeTracingFromEnv words it
 * (test/tracing/sdk.test.ts); without --otel the banner says tracing is off.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';

afterEach(() => killAll());

describe('the start banner', () => {
  it('names the exporter, endpoint and sampler with --otel, and says off without it', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    };
    const traced = await startCli(serveArgs('--otel'), { env });
    expect(traced.stdout).toContain(
      '  tracing: OTLP http/protobuf to http://127.0.0.1:9/v1/traces, sampler parentbased_traceidratio 0.1, service jwt-grpc\n',
    );
    const plain = await startCli(serveArgs());
    expect(plain.stdout).toContain('  tracing: off (--otel turns it on)\n');
  });
});
