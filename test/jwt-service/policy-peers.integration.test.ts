/**
 * The issuance policy seen from elsewhere: on a grpc-js server of the user's own
 * (addJwtService, ServerCredentials.createSsl(..., true)), the caller comes from the call's
 * peer certificate; and grpcurl, a client nobody here wrote, gets the same answers with a
 * client certificate.
 */
import { Server, ServerCredentials, credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit } from '../../bench/kit/launcher.js';
import { GO_TOOLS, findGoTool } from '../../bench/kit/tools.js';
import { type JwtPolicy, addJwtService, createJwtServer, silentLogger } from '../../src/lib/index.js';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { ClientPool, callError, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';

const ORDERS = 'spiffe://example.org/ns/shop/sa/orders';
const POLICY: JwtPolicy = { callers: { [ORDERS]: { subjects: ['svc-orders'], audiences: ['greeter'] } } };

describe.skipIf(!hasOpenssl())('issuance policy, from other servers and clients', () => {
  let certs: TestCerts;
  let orders: ClientCert;
  let stranger: ClientCert;
  const clients = new ClientPool();

  beforeAll(() => {
    certs = makeTestCerts();
    orders = makeClientCert(certs, 'orders', `URI:${ORDERS}`);
    stranger = makeClientCert(certs, 'stranger', 'DNS:stranger.example.org');
  });

  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
    certs?.remove();
  });

  it('addJwtService on a grpc-js server with createSsl(..., true): the caller from the peer certificate', async () => {
    const server = new Server();
    addJwtService(server, { keys: await sharedKeys(), policy: POLICY, logger: silentLogger });
    const creds = ServerCredentials.createSsl(certs.caCert, [{ cert_chain: certs.serverCert, private_key: certs.serverKey }], true);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', creds, (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    try {
      const as = (cert: ClientCert) =>
        clients.jwt(port, { host: 'localhost', credentials: credentials.createSsl(certs.caCert, cert.key, cert.cert) });
      const token = await as(orders).generateJwt({ algorithm: 'ES256', audience: 'greeter' });
      expect(decodeJwt(token.jwt).payload).toMatchObject({ sub: 'svc-orders', client_id: ORDERS });
      const refused = await callError(as(stranger).generateJwt({ algorithm: 'ES256', subject: 'svc-orders', audience: 'greeter' }));
      expect(refused).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('dns:stranger.example.org is not in the policy'),
      });
    } finally {
      server.forceShutdown();
    }
  });

  const grpcurl = findGoTool(GO_TOOLS.grpcurl);
  it.skipIf(grpcurl === null)(
    'grpcurl with a client certificate gets the token its entry allows, and PERMISSION_DENIED outside it',
    async () => {
      const server = trackServer(createJwtServer({ keys: await sharedKeys(), policy: POLICY, logger: silentLogger }));
      const port = await server.listen('127.0.0.1:0', {
        key: certs.serverKey,
        cert: certs.serverCert,
        ca: certs.caCert,
        requireClientCertificate: true,
      });
      const call = (cert: ClientCert, request: object) =>
        runToExit(
          grpcurl as string,
          [
            '-cacert',
            certs.files.caCert,
            '-cert',
            cert.certFile,
            '-key',
            cert.keyFile,
            '-servername',
            'localhost',
            '-d',
            JSON.stringify(request),
            `127.0.0.1:${port}`,
            'jwt.services.JwtService/GenerateJwt',
          ],
          { timeoutMs: 20_000 },
        );
      const allowed = await call(orders, { algorithm: 'ES256', audience: 'greeter' });
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ sub: 'svc-orders' });
      const denied = await call(orders, { algorithm: 'ES256', audience: 'payroll' });
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toMatch(/Code: PermissionDenied[\s\S]*policy rule "audiences"/);
    },
  );
});
