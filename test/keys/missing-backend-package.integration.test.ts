/**
 * pkcs11js and @aws-sdk/client-kms are optional peer dependencies, loaded only when a key
 * names them. When one cannot be resolved (hidden here by a resolve hook, as if not
 * installed), `serve --keys FILE` stops with one line naming the package to install, and
 * loadKeys rejects with a JwtGrpcError whose code is ERR_INVALID_KEY.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, serveArgs } from '../../bench/kit/cli.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

const HOOK = join(import.meta.dirname, 'fixtures', 'hide-packages.mjs');
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-missing-backend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASES = [
  { member: 'pkcs11', packageName: 'pkcs11js', ref: 'pkcs11:token=jwt;object=es256-1?module-path=/usr/lib/softhsm/libsofthsm2.so' },
  { member: 'kms', packageName: '@aws-sdk/client-kms', ref: 'alias/jwt-es256-1' },
] as const;

/** A key file with one ES256 handle of `member` (its public members real, the key behind it never reached). */
function keyFile(member: string, ref: string): string {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const file = join(dir, `${member}.json`);
  writeFileSync(
    file,
    JSON.stringify({ keys: [{ kid: `${member}-key`, alg: 'ES256', [member]: ref, ...publicKey.export({ format: 'jwk' }) }] }),
    { mode: 0o600 },
  );
  return file;
}

describe.each(CASES)('a $member key while $packageName cannot be resolved', ({ member, packageName, ref }) => {
  it('serve --keys stops with one line naming the package to install', async () => {
    const served = await runCli(serveArgs('--keys', keyFile(member, ref)), {
      nodeArgs: ['--import', HOOK],
      env: { HIDE_PACKAGES: packageName },
    });
    expect(served.code).not.toBe(0);
    const lines = served.stderr.trim().split('\n');
    expect(lines, served.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`key ${member}-key:`);
    expect(lines[0]).toContain(`needs ${packageName}, an optional peer dependency not installed here: npm install ${packageName}`);
    expect(served.stderr).not.toMatch(/\n\s+at /);
  });

  it('loadKeys rejects with a JwtGrpcError, code ERR_INVALID_KEY, naming the package', async () => {
    const lib = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'src', 'lib', 'index.js')).href;
    const script = `const { loadKeys, JwtGrpcError } = await import(${JSON.stringify(lib)});
      try { await loadKeys(${JSON.stringify(keyFile(member, ref))}, { logger: { info() {}, warn() {}, error() {}, debug() {} } }); console.log('loaded'); }
      catch (err) { console.log(JSON.stringify({ isJwtGrpcError: err instanceof JwtGrpcError, code: err.code, message: err.message })); }`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', HOOK, '--input-type=module', '-e', script], {
      env: { ...process.env, HIDE_PACKAGES: packageName },
    });
    const result = JSON.parse(stdout) as { isJwtGrpcError: boolean; code: string; message: string };
    expect(result).toMatchObject({ isJwtGrpcError: true, code: 'ERR_INVALID_KEY' });
    expect(result.message).toContain(`npm install ${packageName}`);
  });
});
