/** TLS and mutual TLS (ALPN h2, and http/1.1: test/transport/http1.integration.test.ts), with a grpc-js client. */
import { connect as tlsConnect } from 'node:tls';
import { credentials, status as grpcStatus } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import type { CallContext, ServiceImplementation } from '../../src/contracts/handler-api.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { PROBE, probeClient } from './helpers/probe.js';
import { unary } from '../../bench/kit/grpc-clients.js';
import { closeAllServers } from './helpers/servers.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const probe: ServiceImplementation = {
  Unary: (request: unknown, call: CallContext) => ({ request, peer: call.peer }),
  ServerStream: () => {},
  ClientStream: () => ({}),
  Bidi: () => {},
};

/** The probe's Unary, 5 s at most. */
const probeCall = (client: ReturnType<typeof probeClient>, request: unknown): Promise<unknown> => unary(client, 'Unary', request, 5000);

describe.skipIf(!hasOpenssl())('TLS', () => {
  let certs: TestCerts;
  const closers: (() => Promise<void>)[] = [];

  async function serve(mutual: boolean): Promise<number> {
    const server = createHttp2GrpcServer({ logger: recordingLogger() });
    server.addService(PROBE, probe);
    closers.push(() => server.close({ graceMs: 0 }));
    return server.listen('127.0.0.1:0', {
      key: certs.serverKey,
      cert: certs.serverCert,
      ca: certs.caCert,
      requireClientCertificate: mutual,
    });
  }

  beforeAll(() => {
    certs = makeTestCerts();
  });

  afterAll(async () => {
    await Promise.all(closers.map((close) => close()));
    await closeAllServers();
    certs?.remove();
  });

  it('serves over TLS to a client that trusts the CA', async () => {
    const port = await serve(false);
    const client = probeClient(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert) });
    try {
      expect(await probeCall(client, { hello: 'tls' })).toMatchObject({
        request: { hello: 'tls' },
        peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      });
    } finally {
      client.close();
    }
  });

  it('mutual TLS: serves a client with a certificate from the CA, refuses one without or from another CA', async () => {
    const port = await serve(true);
    const good = probeClient(port, {
      host: 'localhost',
      credentials: credentials.createSsl(certs.caCert, certs.clientKey, certs.clientCert),
    });
    const none = probeClient(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert) });
    const untrusted = probeClient(port, {
      host: 'localhost',
      credentials: credentials.createSsl(certs.caCert, certs.rogueKey, certs.rogueCert),
    });
    try {
      expect(await probeCall(good, { hello: 'mtls' })).toMatchObject({ request: { hello: 'mtls' } });
      await expect(probeCall(none, {})).rejects.toMatchObject({ code: grpcStatus.UNAVAILABLE });
      await expect(probeCall(untrusted, {})).rejects.toMatchObject({ code: grpcStatus.UNAVAILABLE });
      expect(await probeCall(good, { again: true })).toMatchObject({ request: { again: true } });
    } finally {
      for (const client of [good, none, untrusted]) client.close();
    }
  });

  it('offers ALPN h2 and http/1.1 only: a TLS client asking for another protocol is refused', async () => {
    const port = await serve(false);
    const outcome = await new Promise<string>((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca: certs.caCert, servername: 'localhost', ALPNProtocols: ['spdy/3.1'] });
      socket.on('secureConnect', () => {
        socket.destroy();
        resolve(`connected with ${String(socket.alpnProtocol)}`);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(outcome).toMatch(/NO_APPLICATION_PROTOCOL|ECONNRESET|alert/i);
  });

  it('refuses TLS options without key or cert, naming them', async () => {
    const server = createHttp2GrpcServer({ logger: recordingLogger() });
    await expect(server.listen('127.0.0.1:0', { key: certs.serverKey } as never)).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'tls',
    });
    await expect(
      server.listen('127.0.0.1:0', { key: certs.serverKey, cert: certs.serverCert, requireClientCertificate: true }),
    ).rejects.toMatchObject({
      field: 'tls.ca',
    });
  });
});
