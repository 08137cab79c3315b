/**
 * Test certificates made with the `openssl` command at test time, in a temporary folder:
 * a CA, a server certificate for localhost and 127.0.0.1, a client certificate signed by
 * the CA, and a client certificate signed by another (untrusted) CA. EC P-256 keys: fast.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureOutput, runChecked } from './exec.js';

export interface TestCerts {
  readonly dir: string;
  readonly files: {
    readonly caCert: string;
    readonly serverCert: string;
    readonly serverKey: string;
    readonly clientCert: string;
    readonly clientKey: string;
  };
  readonly caCert: Buffer;
  readonly serverCert: Buffer;
  readonly serverKey: Buffer;
  readonly clientCert: Buffer;
  readonly clientKey: Buffer;
  readonly rogueCert: Buffer;
  readonly rogueKey: Buffer;
  remove(): void;
}

/** True when an `openssl` binary can be run. */
export function hasOpenssl(): boolean {
  return captureOutput('openssl', ['version']) !== null;
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-tls-'));
  const at = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => void runChecked('openssl', args, { cwd: dir });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

  const makeCa = (name: string, cn: string): void =>
    openssl(
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      at(`${name}.key`),
      '-out',
      at(`${name}.crt`),
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
  const makeLeaf = (name: string, ca: string, cn: string, extensions: string): void => {
    writeFileSync(at(`${name}.ext`), extensions);
    openssl('req', ...ecKey, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', `/CN=${cn}`);
    openssl(
      'x509',
      '-req',
      '-in',
      at(`${name}.csr`),
      '-CA',
      at(`${ca}.crt`),
      '-CAkey',
      at(`${ca}.key`),
      '-CAcreateserial',
      '-out',
      at(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      at(`${name}.ext`),
    );
  };

  try {
    makeCa('ca', 'jwt-grpc test CA');
    makeCa('rogue-ca', 'jwt-grpc untrusted CA');
    makeLeaf(
      'server',
      'ca',
      'localhost',
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n',
    );
    makeLeaf(
      'client',
      'ca',
      'jwt-grpc test client',
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
    );
    makeLeaf('rogue', 'rogue-ca', 'jwt-grpc rogue client', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`openssl failed: ${(err as Error).message}`);
  }

  const read = (name: string): Buffer => readFileSync(at(name));
  return {
    dir,
    files: {
      caCert: at('ca.crt'),
      serverCert: at('server.crt'),
      serverKey: at('server.key'),
      clientCert: at('client.crt'),
      clientKey: at('client.key'),
    },
    caCert: read('ca.crt'),
    serverCert: read('server.crt'),
    serverKey: read('server.key'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    rogueCert: read('rogue.crt'),
    rogueKey: read('rogue.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `jwt-grpc serve`'s flags for mutual TLS with `certs`: the server's certificate and key, and the CA its callers' certificates must chain to. */
export function mutualTlsArgs(certs: TestCerts): string[] {
  return ['--tls-cert', certs.files.serverCert, '--tls-key', certs.files.serverKey, '--tls-client-ca', certs.files.caCert];
}

/** `JwtServer.listen`'s TLS options for mutual TLS with `certs`: a caller without a certificate the CA signed is refused. */
export function mutualTlsListen(certs: TestCerts): { cert: Buffer; key: Buffer; ca: Buffer; requireClientCertificate: true } {
  return { cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert, requireClientCertificate: true };
}
