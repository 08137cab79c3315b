/**
 * Certificate-bound tokens at the consumer (RFC 8705 section 3): jwtAuthInterceptor lets
 * a token with cnf x5t#S256 through only on a connection presenting that certificate;
 * without a client certificate or with another one the call is UNAUTHENTICATED. On
 * createJwtServer (both transports) and on a grpc-js Server of one's own, over real TLS.
 */
import { createHash } from 'node:crypto';
import { Server, ServerCredentials, credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  CallMetadata,
  GrpcStatus,
  type JwtClient,
  type KeySet,
  addJwtService,
  createJwtClient,
  createJwtServer,
  createSigner,
  createVerifier,
  generateKeys,
  jwtAuthInterceptor,
  silentLogger,
} from '../../src/lib/index.js';
import { type ClientCert, makeClientCert } from '../../bench/kit/caller-certs.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { closeAllServers, trackServer } from '../../bench/kit/jwt-servers.js';

describe.skipIf(!hasOpenssl())('bound tokens at the consumer', () => {
  let certs: TestCerts;
  let keys: KeySet;
  let orders: ClientCert;
  let other: ClientCert;
  const clients: JwtClient[] = [];
  const shutdowns: (() => void)[] = [];

  beforeAll(async () => {
    certs = makeTestCerts();
    keys = await generateKeys({ algorithms: ['ES256'] });
    orders = makeClientCert(certs, 'orders', 'URI:spiffe://example.org/ns/shop/sa/orders');
    other = makeClientCert(certs, 'other', 'URI:spiffe://example.org/ns/shop/sa/other');
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    for (const shutdown of shutdowns) shutdown();
    await closeAllServers();
    certs?.remove();
  });

  const now = (): number => Math.floor(Date.now() / 1000);
  const thumbprint = (cert: ClientCert): string => createHash('sha256').update(cert.der).digest('base64url');
  const token = (cnf?: object): string =>
    createSigner(keys).sign('ES256', { sub: 'svc-orders', iat: now(), exp: now() + 600, ...(cnf !== undefined && { cnf }) }).token;
  const bearer = (value: string) => ({ metadata: new CallMetadata().set('authorization', `Bearer ${value}`) });
  const client = (port: number, cert?: ClientCert): JwtClient => {
    const made = createJwtClient(`localhost:${port}`, {
      credentials: cert === undefined ? credentials.createSsl(certs.caCert) : credentials.createSsl(certs.caCert, cert.key, cert.cert),
    });
    clients.push(made);
    return made;
  };

  const consumers = {
    http2: (mutual: boolean) => serveJwtServer('http2', mutual),
    'grpc-js': (mutual: boolean) => serveJwtServer('grpc-js', mutual),
    'a grpc-js Server of its own': async (mutual: boolean): Promise<number> => {
      const server = new Server({ interceptors: [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))] });
      addJwtService(server, { keys, logger: silentLogger });
      shutdowns.push(() => server.forceShutdown());
      const creds = ServerCredentials.createSsl(certs.caCert, [{ cert_chain: certs.serverCert, private_key: certs.serverKey }], mutual);
      return new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, port) => (err ? reject(err) : resolve(port))));
    },
  };
  async function serveJwtServer(transport: 'http2' | 'grpc-js', mutual: boolean): Promise<number> {
    const server = trackServer(
      createJwtServer({
        keys,
        transport,
        interceptors: [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))],
        logger: silentLogger,
      }),
    );
    return server.listen('127.0.0.1:0', {
      key: certs.serverKey,
      cert: certs.serverCert,
      ca: certs.caCert,
      requireClientCertificate: mutual,
    });
  }

  describe.each(Object.keys(consumers) as (keyof typeof consumers)[])('on %s', (consumer) => {
    it('accepts a bound token with its certificate; refuses it with another, and without one', async () => {
      const mutualPort = await consumers[consumer](true);
      const tlsPort = await consumers[consumer](false);
      const bound = token({ 'x5t#S256': thumbprint(orders) });
      expect(JSON.parse((await client(mutualPort, orders).getJwks({}, bearer(bound))).jwks_json).keys).toHaveLength(1);
      await expect(client(mutualPort, other).getJwks({}, bearer(bound))).rejects.toMatchObject({
        status: GrpcStatus.UNAUTHENTICATED,
        details: 'the token is bound to another client certificate',
      });
      await expect(client(tlsPort).getJwks({}, bearer(bound))).rejects.toMatchObject({
        status: GrpcStatus.UNAUTHENTICATED,
        details: 'the token is bound to a client certificate and the connection presented none',
      });
      // An unbound token needs no certificate; a cnf of another kind is refused (fail closed).
      expect((await client(tlsPort).getJwks({}, bearer(token()))).jwks_json).toContain('keys');
      await expect(client(mutualPort, orders).getJwks({}, bearer(token({ jkt: 'abc' })))).rejects.toMatchObject({
        status: GrpcStatus.UNAUTHENTICATED,
      });
    });
  });
});
