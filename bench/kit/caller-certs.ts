/**
 * Client certificates with the SANs a test chooses (a SPIFFE ID, a DNS name, none),
 * signed by the CA of {@link makeTestCerts}, made with the `openssl` command.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runChecked } from './exec.js';
import type { TestCerts } from './certs.js';

export interface ClientCert {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly certFile: string;
  readonly keyFile: string;
  /** The certificate's DER, for comparing thumbprints. */
  readonly der: Buffer;
}

/** A client certificate named `name` with `subjectAltName` (e.g. `URI:spiffe://example.org/a`, or '' for none). */
export function makeClientCert(certs: TestCerts, name: string, subjectAltName: string): ClientCert {
  const at = (file: string): string => join(certs.dir, file);
  const openssl = (...args: string[]): void => void runChecked('openssl', args, { cwd: certs.dir });
  const extensions = ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth'];
  if (subjectAltName !== '') extensions.push(`subjectAltName=${subjectAltName}`);
  writeFileSync(at(`${name}.ext`), `${extensions.join('\n')}\n`);
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    at(`${name}.key`),
    '-out',
    at(`${name}.csr`),
    '-subj',
    `/CN=${name}`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    at(`${name}.csr`),
    '-CA',
    at('ca.crt'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-out',
    at(`${name}.crt`),
    '-days',
    '2',
    '-extfile',
    at(`${name}.ext`),
  );
  const cert = readFileSync(at(`${name}.crt`));
  const pem = cert.toString('ascii').replace(/-----[A-Z ]+-----|\s/g, '');
  return {
    cert,
    key: readFileSync(at(`${name}.key`)),
    certFile: at(`${name}.crt`),
    keyFile: at(`${name}.key`),
    der: Buffer.from(pem, 'base64'),
  };
}
