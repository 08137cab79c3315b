/**
 * TLS and mutual TLS, with a CA and certificates made by openssl at test time, on each
 * transport: through the library (`listen(address, { cert, key, ca, requireClientCertificate })`)
 * and through the CLI.
 */
import { credentials } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type KeySet, type Transport, createJwtServer, silentLogger } from '../../src/lib/index.js';
import { type TestCerts, hasOpenssl, makeTestCerts, mutualTlsArgs } from '../../bench/kit/certs.js';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { ClientPool, callError, statusName } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, sharedKeys, trackServer, transportArgs } from '../../bench/kit/jwt-servers.js';

const clients = new ClientPool();
let certs: TestCerts;
let keys: KeySet;

beforeAll(async () => {
  if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
  certs = makeTestCerts();
  keys = await sharedKeys();
});

afterEach(async () => {
  clients.closeAll();
  await closeAllServers();
  await killAll();
});

afterAll(() => {
  certs?.remove();
});

/** Failing handshakes end quickly; a short deadline keeps a hang from eating the test timeout. */
const FAIL_FAST = { deadlineMs: 8000 } as const;
/** Connect to 127.0.0.1 but check (and send SNI for) the certificate's DNS name: Node warns about an IP as TLS ServerName. */
const AS_LOCALHOST = { channelOptions: { 'grpc.ssl_target_name_override': 'localhost' } } as const;

async function startTls(transport: Transport, checkClientCertificate: boolean): Promise<number> {
  const server = trackServer(createJwtServer({ transport, keys, logger: silentLogger }));
  const tls = { cert: certs.serverCert, key: certs.serverKey };
  return server.listen('127.0.0.1:0', checkClientCertificate ? { ...tls, ca: certs.caCert, requireClientCertificate: true } : tls);
}

async function expectWorks(port: number, creds: ReturnType<typeof credentials.createSsl>): Promise<void> {
  const client = clients.jwt(port, { credentials: creds, ...AS_LOCALHOST });
  const made = await client.generateJwt({ algorithm: 'ES256', subject: 'tls@example.com' });
  expect(made.sub).toBe('tls@example.com');
  expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
}

async function expectFails(port: number, creds: ReturnType<typeof credentials.createInsecure>): Promise<void> {
  const client = clients.jwt(port, { credentials: creds, ...FAIL_FAST, ...AS_LOCALHOST });
  const err = await callError(client.generateJwt({ algorithm: 'ES256', subject: 'x' }));
  expect(['UNAVAILABLE', 'DEADLINE_EXCEEDED']).toContain(statusName(err.code));
}

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  describe('TLS', () => {
    it('serves a client that trusts the CA', async () => {
      const port = await startTls(transport, false);
      await expectWorks(port, credentials.createSsl(certs.caCert));
    });

    it('does not serve a plaintext client', async () => {
      const port = await startTls(transport, false);
      await expectFails(port, credentials.createInsecure());
    });

    it('is refused by a client that does not trust the CA', async () => {
      const port = await startTls(transport, false);
      await expectFails(port, credentials.createSsl(certs.rogueCert));
    });
  });

  describe('mutual TLS', () => {
    it('refuses a client without a certificate', async () => {
      const port = await startTls(transport, true);
      await expectFails(port, credentials.createSsl(certs.caCert));
    });

    it('refuses a client whose certificate another CA signed', async () => {
      const port = await startTls(transport, true);
      await expectFails(port, credentials.createSsl(certs.caCert, certs.rogueKey, certs.rogueCert));
    });

    it('serves a client whose certificate the CA signed', async () => {
      const port = await startTls(transport, true);
      await expectWorks(port, credentials.createSsl(certs.caCert, certs.clientKey, certs.clientCert));
    });
  });

  describe('CLI', () => {
    it('serves mutual TLS with --tls-cert, --tls-key and --tls-client-ca', async () => {
      const cli = await startCli(serveArgs(...transportArgs(transport), ...mutualTlsArgs(certs)));
      expect(cli.stdout).toContain(`transport: mutual TLS, ${transport} server`);
      await expectWorks(cli.port, credentials.createSsl(certs.caCert, certs.clientKey, certs.clientCert));
      await expectFails(cli.port, credentials.createSsl(certs.caCert));
      await expectFails(cli.port, credentials.createInsecure());
    });

    it('serves TLS with --tls-cert and --tls-key (environment twins)', async () => {
      const { files } = certs;
      const cli = await startCli(serveArgs(...transportArgs(transport)), {
        env: { JWT_GRPC_TLS_CERT: files.serverCert, JWT_GRPC_TLS_KEY: files.serverKey },
      });
      expect(cli.stdout).toContain(`transport: TLS, ${transport} server`);
      await expectWorks(cli.port, credentials.createSsl(certs.caCert));
      await expectFails(cli.port, credentials.createInsecure());
    });
  });
});
