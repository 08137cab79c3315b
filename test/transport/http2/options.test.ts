/**
 * The own HTTP/2 server's options resolved once, at start: defaults from the option table,
 * and a bad value or an unknown option refused with ERR_INVALID_OPTION naming it.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../../src/base/errors.js';
import { silentLogger } from '../../../src/base/log.js';
import { type Http2GrpcServerOptions, resolveHttp2Options } from '../../../src/transport/http2/options.js';

function refusal(options: unknown): JwtGrpcError {
  try {
    resolveHttp2Options(options as Http2GrpcServerOptions);
  } catch (err) {
    if (err instanceof JwtGrpcError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('resolveHttp2Options', () => {
  it('fills the defaults of the option table', () => {
    const resolved = resolveHttp2Options({});
    expect(resolved).toMatchObject({
      maxReceiveMessageBytes: 65_536,
      maxConnectionAgeMs: 1_800_000,
      maxConnectionIdleMs: 60_000,
      requestTimeoutMs: 10_000,
      maxConcurrentStreams: 1024,
      maxProcessStreamMemoryMb: 256,
      maxFlowControlStallMs: 30_000,
      handshakeTimeoutMs: 10_000,
      maxConnections: undefined,
      connectionCounters: undefined,
      interceptors: [],
    });
    expect(typeof resolved.logger.warn).toBe('function');
  });

  it('keeps the values given', () => {
    const interceptors = [{ onCallStart: () => undefined, onCallEnd: () => {} }];
    const resolved = resolveHttp2Options({
      maxReceiveMessageBytes: 2048,
      handshakeTimeoutMs: 500,
      maxConnectionAgeMs: 60_000,
      interceptors,
      logger: silentLogger,
    });
    expect(resolved).toMatchObject({
      maxReceiveMessageBytes: 2048,
      handshakeTimeoutMs: 500,
      maxConnectionAgeMs: 60_000,
      interceptors,
      logger: silentLogger,
    });
  });

  it('refuses options that are not an object', () => {
    for (const options of [null, 'x', 5]) {
      const err = refusal(options);
      expect([err.code, err.field, err.message]).toEqual(['ERR_INVALID_OPTION', 'options', 'option options: must be an object']);
    }
  });

  it('refuses a value out of range, naming the option', () => {
    let err = refusal({ maxReceiveMessageBytes: 10 });
    expect([err.code, err.field]).toEqual(['ERR_INVALID_OPTION', 'maxReceiveMessageBytes']);
    expect(err.message).toMatch(/^option maxReceiveMessageBytes: /);
    err = refusal({ handshakeTimeoutMs: 'soon' });
    expect([err.code, err.field]).toEqual(['ERR_INVALID_OPTION', 'handshakeTimeoutMs']);
  });

  it('refuses interceptors that are not a list of interceptors', () => {
    const err = refusal({ interceptors: [42] });
    expect([err.code, err.field]).toEqual(['ERR_INVALID_OPTION', 'interceptors']);
  });
});
