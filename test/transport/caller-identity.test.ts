/**
 * The caller a verified client certificate names (CallContext.caller), on noSan transports,
 * over real mutual TLS with certificates made here.
 */
import { createHash } from 'node:crypto';
import { Server, ServerCredentials, credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServiceToGrpcJs } from '../../src/transport/grpc-js.js';
import type { CallContext, ServiceImplementation } from '../../src/contracts/handler-api.js';
import { createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { PROBE, probeClient } from './helpers/probe.js';
import { unary } from '../../bench/kit/grpc-clients.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const probe: ServiceImplementation = {
  Unary: (_request: unknown, call: CallContext) =>
    call.caller === undefined
      ? { caller: null }
      : { id: call.caller.id ?? null, thumbprint: call.caller.thumbprint, der: call.caller.certificate.toString('base64') },
  ServerStream: () => {},
  ClientStream: () => ({}),
  Bidi: () => {},
};

/** The probe's Unary: who the server says called, 5 s at most. */
const probeCall = (client: ReturnType<typeof probeClient>): Promise<Record<string, unknown>> => unary(client, 'Unary', {}, 5000);

describe.skipIf(!hasOpenssl())('caller identity from mutual TLS', () => {
  let certs: TestCerts;
  let spiffe: ClientCert;
  let dnsOnly: ClientCert;
  let noSan: ClientCert;
  const closers: (() => Promise<void>)[] = [];

  const servers = {
    async http2(mutual: boolean): Promise<number> {
      const server = createHttp2GrpcServer({ logger: recordingLogger() });
      server.addService(PROBE, probe);
      closers.push(() => server.close({ graceMs: 0 }));
      return server.listen('127.0.0.1:0', {
        key: certs.serverKey,
        cert: certs.serverCert,
        ca: certs.caCert,
        requireClientCertificate: mutual,
      });
    },
    async 'grpc-js'(mutual: boolean): Promise<number> {
      const server = new Server();
      addServiceToGrpcJs(server, PROBE, probe, { logger: recordingLogger() });
      closers.push(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
      const creds = ServerCredentials.createSsl(certs.caCert, [{ cert_chain: certs.serverCert, private_key: certs.serverKey }], mutual);
      return new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, port) => (err ? reject(err) : resolve(port))));
    },
  };

  beforeAll(() => {
    certs = makeTestCerts();
    spiffe = makeClientCert(certs, 'orders', 'URI:spiffe://example.org/ns/shop/sa/orders, DNS:orders.example.org');
    dnsOnly = makeClientCert(certs, 'reports', 'DNS:reports.example.org, DNS:other.example.org');
    noSan = makeClientCert(certs, 'nosan', '');
  });

  afterAll(async () => {
    await Promise.all(closers.map((close) => close()));
    certs?.remove();
  });

  const client = (port: number, cert?: ClientCert) =>
    probeClient(port, {
      host: 'localhost',
      credentials: cert === undefined ? credentials.createSsl(certs.caCert) : credentials.createSsl(certs.caCert, cert.key, cert.cert),
    });

  for (const transport of ['http2', 'grpc-js'] as const) {
    describe(transport, () => {
      it('names the caller by its URI SAN as written, else dns: + its first DNS SAN; none without either', async () => {
        const port = await servers[transport](true);
        const clients = [client(port, spiffe), client(port, dnsOnly), client(port, noSan)];
        try {
          const [a, b, c] = await Promise.all(clients.map((c) => probeCall(c)));
          expect(a).toEqual({
            id: 'spiffe://example.org/ns/shop/sa/orders',
            thumbprint: createHash('sha256').update(spiffe.der).digest('base64url'),
            der: spiffe.der.toString('base64'),
          });
          expect(b).toMatchObject({ id: 'dns:reports.example.org' });
          expect(c).toMatchObject({ id: null, der: noSan.der.toString('base64') });
        } finally {
          for (const each of clients) each.close();
        }
      });

      it('has no caller on a TLS connection that verifies no client certificate', async () => {
        const port = await servers[transport](false);
        const anonymous = client(port);
        try {
          expect(await probeCall(anonymous)).toEqual({ caller: null });
        } finally {
          anonymous.close();
        }
      });
    });
  }
});
