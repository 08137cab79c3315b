/**
 * The client commands' TLS files (src/cli/tls-files.ts): plaintext unless a TLS flag is
 * given, a certificate and key only together, files that cannot be read named with what
 * they were for, and a client private key open to others warned about.
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clientTransport } from '../../src/cli/tls-files.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-tls-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { warn() {} };
const secure = (transport: { credentials: unknown }) => (transport.credentials as { _isSecure(): boolean })._isSecure();

describe('clientTransport', () => {
  it('is plaintext without a TLS flag, and TLS with --tls alone', async () => {
    const plain = await clientTransport({}, quiet);
    expect(secure(plain)).toBe(false);
    expect(plain.channelOptions).toEqual({});
    expect(secure(await clientTransport({ tls: true }, quiet))).toBe(true);
  });

  it('trusts a CA bundle and checks the server against --tls-server-name', async () => {
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
    const transport = await clientTransport({ tlsCa: ca, tlsServerName: 'issuer.internal' }, quiet);
    expect(secure(transport)).toBe(true);
    expect(transport.channelOptions).toEqual({ 'grpc.ssl_target_name_override': 'issuer.internal' });
    expect(secure(await clientTransport({ tlsServerName: 'x' }, quiet)), '--tls-server-name implies TLS').toBe(true);
  });

  it('refuses a certificate without its key and a key without its certificate', async () => {
    for (const options of [{ tlsCert: 'c.pem' }, { tlsKey: 'k.pem' }]) {
      await expect(clientTransport(options, quiet)).rejects.toMatchObject({
        code: 'ERR_INVALID_OPTION',
        message: 'option --tls-cert/--tls-key: give both or neither',
      });
    }
  });

  it('names a file it cannot read, and what it was for', async () => {
    const missing = join(dir, 'missing.pem');
    await expect(clientTransport({ tlsCa: missing }, quiet)).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: missing,
      message: `cannot read CA bundle ${missing}: ENOENT`,
    });
    await expect(clientTransport({ tlsCert: missing, tlsKey: missing }, quiet)).rejects.toMatchObject({
      message: expect.stringMatching(/^cannot read client (certificate|private key) /),
    });
  });

  it.skipIf(process.platform === 'win32')('warns about a client private key others can read, naming the file only', async () => {
    const key = join(dir, 'client-key.pem');
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    writeFileSync(key, pem);
    chmodSync(key, 0o644);
    const warnings: string[] = [];
    // The certificate is not one: the credentials refuse it after the files are read and checked.
    await clientTransport({ tlsCert: key, tlsKey: key }, { warn: (message) => void warnings.push(message) }).catch(() => undefined);
    expect(warnings).toEqual([`client private key ${key} is readable by group or others (mode 644): chmod 600 it`]);
    expect(warnings.join()).not.toContain('PRIVATE KEY');
  });
});
