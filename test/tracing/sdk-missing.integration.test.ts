/**
 * An app that has not installed the OpenTelemetry SDK (an optional peer dependency):
 * `tracing: true` (`--otel`) fails at creation naming the option and the one npm command
 * that installs what is missing, not a bare MODULE_NOT_FOUND. The SDK is hidden from this
 * test process's resolver.
 */
import { registerHooks } from 'node:module';
import { describe, expect, it } from 'vitest';
import { JwtGrpcError, createJwtServer, generateKeys } from '../../src/lib/index.js';

const HIDDEN = new Set(['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-proto']);

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (HIDDEN.has(specifier)) throw Object.assign(new Error(`Cannot find module '${specifier}'`), { code: 'MODULE_NOT_FOUND' });
    return nextResolve(specifier, context);
  },
});

describe('tracing: true without the OpenTelemetry SDK', () => {
  it('fails naming the option and the npm command that installs the SDK and the exporter', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    let err: unknown;
    try {
      createJwtServer({ keys, tracing: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect((err as JwtGrpcError).code).toBe('ERR_INVALID_OPTION');
    expect((err as JwtGrpcError).field).toBe('tracing');
    expect((err as JwtGrpcError).message).toMatch(
      /^option tracing: true needs the OpenTelemetry SDK and its http\/protobuf exporter, optional peer dependencies not installed here: npm install (@opentelemetry\/[a-z-]+ ?)+$/,
    );
    expect((err as JwtGrpcError).message).toContain('@opentelemetry/sdk-trace');
    expect((err as JwtGrpcError).message).toContain('@opentelemetry/exporter-trace-otlp-proto');
  });
});
