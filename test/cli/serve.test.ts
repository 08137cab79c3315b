/**
 * `jwt-grpc serve` composed in process (src/cli/serve.ts), one process, signals left alone:
 * the files it reads checked first and refused by flag, the banner saying what serves and
 * how, the open-mode warning, and --watch-keys reloading the key file when it changes.
 * The CLI process suites (test/cli/cli.test.ts and beside it) run the same as a process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ServeArgs, parseCommand } from '../../src/cli/args.js';
import { serve } from '../../src/cli/serve.js';
import type { ClusterHandle } from '../../src/cluster/handle.js';
import { exportKeys, generateKeys } from '../../src/lib/index.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let stdout: string[];
let stderr: string[];
const handles: ClusterHandle[] = [];
beforeEach(() => {
  stdout = [];
  stderr = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => stdout.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
});
afterEach(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
  await new Promise((resolve) => setImmediate(resolve));
  vi.restoreAllMocks();
});

/** ServeArgs as the command line gives them, on an ephemeral loopback port, without signal handlers. */
function args(...argv: string[]): ServeArgs {
  const command = parseCommand(['serve', '--host', '127.0.0.1', '--port', '0', ...argv], {});
  if (command.kind !== 'serve') throw new Error('not serve');
  return { ...command.args, cluster: { ...command.args.cluster, handleSignals: false } };
}

async function started(serveArgs: ServeArgs): Promise<ClusterHandle> {
  const handle = await serve(serveArgs);
  handles.push(handle);
  return handle;
}

async function keyFile(name: string, algorithms: string[]): Promise<string> {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(exportKeys(await generateKeys({ algorithms }), { includePrivate: true })), { mode: 0o600 });
  return file;
}

describe('serve', () => {
  it('prints the banner of a single plaintext process with ephemeral keys, and warns of open mode', async () => {
    const handle = await started(args());
    const banner = stdout.join('');
    expect(banner).toContain(`jwt-grpc listening on 127.0.0.1:${handle.port}\n`);
    expect(banner).toContain('  transport: plaintext (no TLS), http2 server\n');
    expect(banner).toContain('  protocols: grpc, grpc-web, connect; CORS off (no --cors-origins)\n');
    expect(banner).toContain(`  workers: 1 (single process) pids ${process.pid}\n`);
    expect(banner).toContain('  keys: ephemeral\n');
    expect(banner).toContain('  policy: none (open: any caller may get any token)\n');
    expect(banner).toContain('  revocations: in memory only; RevokeJwt off (no --admin-token-file, no revokers); jti on\n');
    expect(banner).toContain('  token exchange: off (--trust-file turns it on)\n');
    expect(banner).toContain('  tracing: off (--otel turns it on)\n');
    expect(banner).not.toContain('  primary:');
    const logged = stderr.join('');
    expect(logged).toContain('OPEN MODE');
    expect(logged).toContain('EPHEMERAL keys');
  });

  it('names the key file and the reloads in the banner, and --watch-keys reloads a changed file', async () => {
    const file = await keyFile('keys.json', ['ES256']);
    const handle = await started(args('--keys', file, '--watch-keys', '--no-jti'));
    expect(stdout.join('')).toContain(`  keys: ${file}, reloaded on SIGHUP and when it changes\n`);
    expect(stdout.join('')).toMatch(/; jti off \(--no-jti\)\n/);
    const before = handle.keys.keys.map((key) => key.kid);
    writeFileSync(file, JSON.stringify(exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true })), {
      mode: 0o600,
    });
    await vi.waitFor(() => expect(stderr.join('')).toContain(`key file ${file} changed: reloading it`), { timeout: 5000, interval: 50 });
    await vi.waitFor(() => expect(stderr.join('')).toContain('keys reloaded'), { timeout: 5000, interval: 50 });
    expect(handle.keys.keys.map((key) => key.kid)).not.toEqual(before);
  });

  it('refuses files it cannot read, naming each, before binding anything', async () => {
    const missing = join(dir, 'missing.pem');
    await expect(serve(args('--tls-cert', missing, '--tls-key', missing))).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: `cannot read ${missing}: ENOENT`,
    });
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'hello', { mode: 0o600 });
    await expect(serve(args('--tls-cert', notPem, '--tls-key', notPem))).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: '--tls-cert',
      message: `--tls-cert: ${notPem} is not a PEM certificate (no -----BEGIN CERTIFICATE----- line)`,
    });
    expect(stdout.join('')).toBe('');
  });
});
