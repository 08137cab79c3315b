/**
 * createHttp2GrpcServer's own checks, with no connection made: the listen address, the TLS
 * options (refused before anything is bound, so listen may be called again), the server's
 * states (no service added or listen after close, a close while binding), and close's
 * idempotence and disposal. Its connections' life (GOAWAY, keepalive, age, Rapid Reset) is
 * tested over real connections in test/transport/lifecycle.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../../src/base/errors.js';
import { silentLogger } from '../../../src/base/log.js';
import { createHttp2GrpcServer } from '../../../src/transport/http2/server.js';
import type { ServerTlsOptions } from '../../../src/contracts/handler-api.js';
import { PROBE } from '../helpers/probe.js';

const server = () => createHttp2GrpcServer({ logger: silentLogger });
const handlers = { Unary: () => ({}), ServerStream: () => {}, ClientStream: () => ({}), Bidi: () => {} };

async function rejection(promise: Promise<unknown>): Promise<JwtGrpcError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof JwtGrpcError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('createHttp2GrpcServer', () => {
  it('refuses an address that is not host:port or [v6]:port, naming it', async () => {
    for (const address of ['localhost', '127.0.0.1:', ':50051', '127.0.0.1:65536', '::1:0', '127.0.0.1:123456']) {
      const s = server();
      const err = await rejection(s.listen(address));
      expect([err.code, err.field, err.message], address).toEqual([
        'ERR_LISTEN',
        'address',
        `listen: address must be "host:port" or "[v6]:port", got ${JSON.stringify(address)}`,
      ]);
      await s.close();
    }
  });

  const tlsRefusals: [string, unknown, string, string][] = [
    ['not an object', 'pem', 'tls', 'must be an object with key and cert'],
    ['without a cert', { key: 'k' }, 'tls', 'key and cert are required'],
    [
      'with requireClientCertificate not a boolean',
      { key: 'k', cert: 'c', requireClientCertificate: 'yes' },
      'tls.requireClientCertificate',
      'must be a boolean',
    ],
    [
      'mutual without a ca',
      { key: 'k', cert: 'c', requireClientCertificate: true },
      'tls.ca',
      'is required to verify client certificates (requireClientCertificate)',
    ],
  ];
  for (const [what, tls, field, message] of tlsRefusals) {
    it(`refuses TLS options ${what}, naming ${field}, and can still listen`, async () => {
      const s = server();
      const err = await rejection(s.listen('127.0.0.1:0', tls as ServerTlsOptions));
      expect([err.code, err.field, err.message]).toEqual(['ERR_INVALID_OPTION', field, `option ${field}: ${message}`]);
      expect(await s.listen('127.0.0.1:0')).toBeGreaterThan(0);
      await s.close();
    });
  }

  it('refuses a second listen, and a service or a listen once closed', async () => {
    const s = server();
    s.addService(PROBE, handlers);
    await s.listen('127.0.0.1:0');
    expect((await rejection(s.listen('127.0.0.1:0'))).message).toBe('listen: server is already listened');
    await s.close();
    expect(() => s.addService(PROBE, handlers)).toThrow(
      expect.objectContaining({ code: 'ERR_SERVER_STATE', message: 'addService: server is closed' }),
    );
    const err = await rejection(s.listen('127.0.0.1:0'));
    expect([err.code, err.message]).toEqual(['ERR_SERVER_STATE', 'listen: server is already closed']);
  });

  it('refuses a listen that a close overtook while binding, leaving no port open', async () => {
    const s = server();
    const listening = s.listen('127.0.0.1:0');
    const closed = s.close();
    const err = await rejection(listening);
    expect([err.code, err.message]).toEqual(['ERR_SERVER_STATE', 'listen: server was closed while binding']);
    await closed;
  });

  it('closes once however often asked, before or after listening, and on disposal', async () => {
    const never = server();
    await never.close();
    await never.close();
    const s = server();
    await s.listen('127.0.0.1:0');
    const first = s.close();
    expect(s.close()).toBe(first);
    await first;
    const disposed = server();
    await disposed.listen('127.0.0.1:0');
    await disposed[Symbol.asyncDispose]();
    expect((await rejection(disposed.listen('127.0.0.1:0'))).code).toBe('ERR_SERVER_STATE');
  });
});
