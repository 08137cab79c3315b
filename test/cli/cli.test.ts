/**
 * The `jwt-grpc` command as a user runs it: help, version, bad options, serving with no
 * configuration, environment twins, and a missing keys file.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { exportKeys, generateKeys } from '../../src/lib.js';
import { REPO_ROOT, killAllCli, runCli, serveArgs, startCli } from '../helpers/cli.js';
import { ClientPool, decodeJwt } from '../helpers/client.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SUBJECTS = JSON.parse(readFileSync(join(REPO_ROOT, 'bench', 'fixtures', 'subjects.json'), 'utf8')) as string[];

/** Every option of `serve` and its environment twin: the CLI's documented surface. */
const OPTIONS: readonly [flag: string, env: string][] = [
  ['--host', 'JWT_GRPC_HOST'],
  ['--port', 'JWT_GRPC_PORT'],
  ['--keys', 'JWT_GRPC_KEYS'],
  ['--subjects', 'JWT_GRPC_SUBJECTS'],
  ['--issuer', 'JWT_GRPC_ISSUER'],
  ['--ttl', 'JWT_GRPC_TTL'],
  ['--max-ttl', 'JWT_GRPC_MAX_TTL'],
  ['--tls-cert', 'JWT_GRPC_TLS_CERT'],
  ['--tls-key', 'JWT_GRPC_TLS_KEY'],
  ['--tls-client-ca', 'JWT_GRPC_TLS_CLIENT_CA'],
  ['--no-reflection', 'JWT_GRPC_NO_REFLECTION'],
  ['--no-health', 'JWT_GRPC_NO_HEALTH'],
  ['--max-connection-age-ms', 'JWT_GRPC_MAX_CONNECTION_AGE_MS'],
  ['--verify-cache', 'JWT_GRPC_VERIFY_CACHE'],
  ['--grace-ms', 'JWT_GRPC_GRACE_MS'],
];

const clients = new ClientPool();
const tempDirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-cli-'));
  tempDirs.push(dir);
  return dir;
}

afterEach(async () => {
  clients.closeAll();
  await killAllCli();
});

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('help and version', () => {
  it.each([['--help'], ['-h'], ['serve', '--help']])('%s exits 0 and lists every option with its environment twin', async (...args) => {
    const result = await runCli(args);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    for (const [flag, env] of OPTIONS) {
      const at = lines.findIndex((line) => line.trimStart().startsWith(`${flag} `) || line.trim() === flag);
      expect(at, `${flag} in --help`).toBeGreaterThanOrEqual(0);
      // The twin is on the option's own line or the one after it.
      expect(`${lines[at]}\n${lines[at + 1]}`, `${env} next to ${flag}`).toContain(`env: ${env}`);
    }
    expect(result.stdout).toContain('NODEMAXPROCS');
  });

  it('--version prints the version of package.json', async () => {
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${VERSION}\n`);
  });
});

describe('bad options exit 2 with a message', () => {
  it.each([
    ['an unknown option', ['serve', '--bogus'], /--bogus/],
    ['an unknown command', ['launch'], /launch/],
    ['a port that is not a number', ['serve', '--port', 'abc'], /--port/],
    ['a port out of range', ['serve', '--port', '70000'], /--port/],
    ['a negative ttl', ['serve', '--ttl', '-5'], /--ttl/],
    ['a negative ttl (=)', ['serve', '--ttl=-5'], /--ttl/],
    ['a ttl of zero', ['serve', '--ttl', '0'], /--ttl/],
    ['--tls-cert without --tls-key', ['serve', '--tls-cert', 'cert.pem'], /--tls-cert/],
    ['a positional argument', ['serve', 'extra'], /extra/],
  ])('%s', async (_, args, message) => {
    const result = await runCli(args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('--help');
    expect(result.stdout).toBe('');
  });

  it('a bad environment twin (JWT_GRPC_PORT=abc)', async () => {
    const result = await runCli(['serve'], { env: { JWT_GRPC_PORT: 'abc' } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/--port/);
  });
});

describe('serve', () => {
  it('serves with no configuration: ephemeral keys, a warning on stderr, requests name their subject', async () => {
    const cli = await startCli(serveArgs());
    expect(cli.stdout).toContain('transport: plaintext');
    expect(cli.stdout).toContain('workers: 1 (single process)');
    expect(cli.stdout).toContain('subjects: none');
    expect(cli.stderr).toMatch(/warn: .*EPHEMERAL/);
    const client = clients.jwt(cli.port);
    const made = await client.generateJwt({ algorithm: 'ES256', subject: 'cli@example.com' });
    expect(made.sub).toBe('cli@example.com');
    expect(cli.stdout).toContain(made.kid);
    expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
    // No pool configured: a request without subject is refused.
    await expect(client.generateJwt({ algorithm: 'ES256' })).rejects.toMatchObject({ code: 3 });
  });

  it('reads its settings from the environment twins', async () => {
    const cli = await startCli(['serve'], {
      env: {
        JWT_GRPC_HOST: '127.0.0.1',
        JWT_GRPC_PORT: '0',
        JWT_GRPC_SUBJECTS: 'bench/fixtures/subjects.json',
        JWT_GRPC_ISSUER: 'https://env.example.test',
        JWT_GRPC_TTL: '600',
      },
    });
    expect(cli.stdout).toContain(`subjects: ${SUBJECTS.length} from bench/fixtures/subjects.json`);
    const made = await clients.jwt(cli.port).generateJwt({ algorithm: 'HS256' });
    expect(made.sub).toBe(SUBJECTS[0]);
    const { payload } = decodeJwt(made.jwt);
    expect(payload['iss']).toBe('https://env.example.test');
    expect(made.expires_at - (payload['iat'] as number)).toBe(600);
  });

  it('lets a flag win over its environment twin', async () => {
    const cli = await startCli(serveArgs('--issuer', 'https://flag.example.test'), {
      env: { JWT_GRPC_ISSUER: 'https://env.example.test', JWT_GRPC_PORT: '1' },
    });
    const made = await clients.jwt(cli.port).generateJwt({ algorithm: 'HS256', subject: 's' });
    expect(decodeJwt(made.jwt).payload['iss']).toBe('https://flag.example.test');
  });

  it('serves the keys of a --keys file', async () => {
    const keys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
    const file = join(tempDir(), 'keys.json');
    writeFileSync(file, JSON.stringify(exportKeys(keys, { includePrivate: true })));
    chmodSync(file, 0o600);
    const cli = await startCli(serveArgs('--keys', file));
    expect(cli.stderr).not.toMatch(/EPHEMERAL|readable by group/);
    expect(cli.stdout).toContain('algorithms: ES256, HS256');
    const made = await clients.jwt(cli.port).generateJwt({ algorithm: 'ES256', subject: 's' });
    expect(made.kid).toBe(keys.keys[0]?.kid);
  });

  it('exits 1 naming the file when the keys file is missing', async () => {
    const missing = join(tempDir(), 'no-such-keys.json');
    const result = await runCli(serveArgs('--keys', missing));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(missing);
    expect(result.stdout).not.toContain('listening');
  });

  it('exits 1 naming the file when the subjects file is missing', async () => {
    const missing = join(tempDir(), 'no-such-subjects.json');
    const result = await runCli(serveArgs('--subjects', missing));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(missing);
  });

  it('exits 0 after SIGTERM', async () => {
    const cli = await startCli(serveArgs());
    await clients.jwt(cli.port).generateJwt({ algorithm: 'HS256', subject: 's' });
    cli.signal('SIGTERM');
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.stderr).toContain('draining');
  });
});
