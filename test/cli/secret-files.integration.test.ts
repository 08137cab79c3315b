/**
 * Every file that holds a secret gets the same check (src/base/secret-file.ts): the key file, the
 * admin token file (server and client side), the TLS private key (serve, and the client
 * commands' --tls-key). A file open to group or others, or owned by another user, is warned
 * about once, naming the file; a 0600 file of our own is not. And an admin secret accepted on
 * a plaintext port that is not loopback gets one start-up warning. The check itself, mode by
 * owner: test/secret-file.test.ts.
 */
import { chmodSync, chownSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJwtServer } from '../../src/lib/index.js';
import { readAdminSecretText } from '../../src/cli/admin-token.js';
import { clientTransport } from '../../src/cli/tls-files.js';
import { launchCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { closeAllServers, recordingLogger, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';

const SECRET = 'test-admin-secret-0123456789';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-secret-files-'));
});

afterAll(async () => {
  await closeAllServers();
  rmSync(dir, { recursive: true, force: true });
});

function secretFile(name: string, mode: number, text = `${SECRET}\n`): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

const warnings = (logger: ReturnType<typeof recordingLogger>): string[] =>
  logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);

describe('the admin token file', () => {
  it('createJwtServer warns once about one open to others, naming it, never its content; a 0600 one is quiet', async () => {
    const keys = await sharedKeys();
    for (const [mode, expected] of [
      [0o644, 1],
      [0o600, 0],
    ] as const) {
      const file = secretFile(`admin-${mode.toString(8)}`, mode);
      const logger = recordingLogger();
      await trackServer(createJwtServer({ keys, adminTokenFile: file, logger })).listen('127.0.0.1:0');
      const warned = warnings(logger).filter((line) => line.includes(file));
      expect(warned).toHaveLength(expected);
      if (expected === 1) expect(warned[0]).toBe(`admin token file ${file} is readable by group or others (mode 644): chmod 600 it`);
      expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
    }
  });

  it.skipIf(process.getuid?.() !== 0)('warns about one owned by another user (as root: chown to nobody)', async () => {
    const file = secretFile('admin-nobody', 0o600);
    chownSync(file, 65534, 65534);
    const logger = recordingLogger();
    await trackServer(createJwtServer({ keys: await sharedKeys(), adminTokenFile: file, logger })).listen('127.0.0.1:0');
    expect(warnings(logger)).toContain(
      `admin token file ${file} is owned by uid 65534, not by this process's user (uid 0) or root: chown it`,
    );
  });

  it('the client side (jwt-grpc revoke --admin-token-file) warns the same way', async () => {
    const logger = recordingLogger();
    expect(await readAdminSecretText(secretFile('client-admin', 0o640), logger)).toBe(SECRET);
    expect(warnings(logger)).toEqual([
      expect.stringMatching(/^admin token file .*client-admin is readable by group or others \(mode 640\)/),
    ]);
    const quiet = recordingLogger();
    await readAdminSecretText(secretFile('client-admin-600', 0o600), quiet);
    expect(warnings(quiet)).toEqual([]);
  });
});

describe.skipIf(!hasOpenssl())('TLS private keys', () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs?.remove());

  it('the client commands warn about a client key open to others, not about the certificate', async () => {
    const key = join(dir, 'client.key');
    copyFileSync(certs.files.clientKey, key);
    chmodSync(key, 0o644);
    const cert = join(dir, 'client.crt');
    copyFileSync(certs.files.clientCert, cert);
    chmodSync(cert, 0o644);
    const logger = recordingLogger();
    await clientTransport({ tlsCa: certs.files.caCert, tlsCert: cert, tlsKey: key }, logger);
    expect(warnings(logger)).toEqual([`client private key ${key} is readable by group or others (mode 644): chmod 600 it`]);
  });

  it('serve warns once about its --tls-key, single process and cluster; a 0600 key is quiet', async () => {
    const key = join(dir, 'server.key');
    copyFileSync(certs.files.serverKey, key);
    const args = (extra: string[] = []) => serveArgs('--tls-cert', certs.files.serverCert, '--tls-key', key, ...extra);
    for (const workers of ['1', '2']) {
      chmodSync(key, 0o644);
      const loose = await startCli(args(), { env: { NODEMAXPROCS: workers } });
      await loose.stop();
      expect(
        loose.stderr.split(`TLS private key ${key} is readable by group or others (mode 644)`),
        `workers ${workers}: ${loose.stderr}`,
      ).toHaveLength(2);
    }
    chmodSync(key, 0o600);
    const tight = await startCli(args());
    await tight.stop();
    expect(tight.stderr).not.toContain(key);
  }, 60_000);
});

describe('an admin secret on a plaintext port', () => {
  const WARNING = /--admin-token-file \(adminTokenFile\) on a plaintext port \(0\.0\.0\.0:\d+, no TLS\): .*--tls-cert\/--tls-key/;

  it('is warned about once when the port is not loopback; a loopback one is not', async () => {
    const admin = secretFile('admin-plaintext', 0o600);
    const open = launchCli(['serve', '--host', '0.0.0.0', '--port', '0', '--admin-token-file', admin]);
    try {
      await open.waitFor('stdout', /subjects: /, 15_000);
      expect(open.stderr.match(new RegExp(WARNING, 'g'))).toHaveLength(1);
    } finally {
      await open.stop();
    }
    const loopback = await startCli(serveArgs('--admin-token-file', admin));
    await loopback.stop();
    expect(loopback.stderr).not.toMatch(/plaintext port/);
  }, 60_000);

  it('is said once by a cluster, by its primary, not once per worker', async () => {
    const admin = secretFile('admin-plaintext-cluster', 0o600);
    const open = launchCli(['serve', '--host', '0.0.0.0', '--port', '0', '--admin-token-file', admin], { env: { NODEMAXPROCS: '2' } });
    try {
      await open.waitFor('stdout', /subjects: /, 20_000);
      expect(open.stderr.match(new RegExp(WARNING, 'g'))).toHaveLength(1);
    } finally {
      await open.stop();
    }
  }, 60_000);

  it('is said by createJwtServer too, for a library user, naming the option; not on loopback', async () => {
    const admin = secretFile('admin-plaintext-library', 0o600);
    const logger = recordingLogger();
    const open = trackServer(createJwtServer({ keys: await sharedKeys(), adminTokenFile: admin, logger }));
    await open.listen('0.0.0.0:0');
    expect(logger.lines.filter((line) => line.level === 'warn' && WARNING.test(line.message))).toHaveLength(1);
    const quiet = recordingLogger();
    await trackServer(createJwtServer({ keys: await sharedKeys(), adminTokenFile: admin, logger: quiet })).listen('127.0.0.1:0');
    expect(quiet.lines.filter((line) => /plaintext port/.test(line.message))).toEqual([]);
    await closeAllServers();
  });
});
