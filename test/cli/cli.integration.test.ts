/**
 * The `jwt-grpc` command as a user runs it: help, version, bad options, serving (on each
 * transport) with no configuration, environment twins, and a missing keys file.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { exportKeys, generateKeys } from '../../src/lib/index.js';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { CLI_ENTRY, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { PARENT_CHECK_MS } from '../../src/cli/parent-watch.js';
import { isAlive } from '../../bench/kit/proc.js';
import { killGroup } from '../../bench/kit/exec.js';
import { killAll } from '../../bench/kit/launcher.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { callError, ClientPool, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SUBJECTS = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'bench', 'fixtures', 'subjects.json'), 'utf8')) as string[];

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
  ['--transport', 'JWT_GRPC_TRANSPORT'],
  ['--verify-cache', 'JWT_GRPC_VERIFY_CACHE'],
  ['--grace-ms', 'JWT_GRPC_GRACE_MS'],
  ['--transport', 'JWT_GRPC_TRANSPORT'],
  ['--metrics-port', 'JWT_GRPC_METRICS_PORT'],
  ['--watch-keys', 'JWT_GRPC_WATCH_KEYS'],
  ['--exit-with-parent', 'JWT_GRPC_EXIT_WITH_PARENT'],
  ['--log-format', 'JWT_GRPC_LOG_FORMAT'],
  ['--log-level', 'JWT_GRPC_LOG_LEVEL'],
  ['--otel', 'JWT_GRPC_OTEL'],
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
  await killAll();
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

  it.each([['--version'], ['-v'], ['version']])('%s prints the version of package.json', async (flag) => {
    const result = await runCli([flag]);
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
    ['a fractional ttl', ['serve', '--ttl', '1.5'], /--ttl/],
    ['a ttl above the longest lifetime', ['serve', '--ttl', '100000'], /--ttl: must be at most --max-ttl/],
    ['a verification cache above its bound', ['serve', '--verify-cache', '10000001'], /--verify-cache/],
    ['--tls-cert without --tls-key', ['serve', '--tls-cert', 'cert.pem'], /--tls-cert/],
    ['a positional argument', ['serve', 'extra'], /extra/],
    ['--watch-keys without --keys', ['serve', '--watch-keys'], /--watch-keys: needs --keys/],
    ['an unknown log format', ['serve', '--log-format', 'xml'], /--log-format/],
    ['a metrics port out of range', ['serve', '--metrics-port', '70000'], /--metrics-port/],
    ['an unknown transport', ['serve', '--transport', 'grpc'], /--transport: must be one of http2, grpc-js/],
  ])('%s', async (_, args, message) => {
    const result = await runCli(args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('--help');
    expect(result.stdout).toBe('');
  });

  it('a bad option in cluster mode, before any worker starts', async () => {
    const result = await runCli(['serve', '--ttl', '100000'], { env: { NODEMAXPROCS: '2' } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/--ttl/);
    expect(result.stderr).not.toMatch(/worker/);
  });

  it('a bad environment twin (JWT_GRPC_PORT=abc): named by the variable that set it', async () => {
    const result = await runCli(['serve'], { env: { JWT_GRPC_PORT: 'abc' } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^jwt-grpc: option JWT_GRPC_PORT: must be an integer from 0 to 65535, got "abc"$/m);
  });
});

describe.each(TRANSPORTS)('serve on transport %s', (transport) => {
  it('serves with no configuration: ephemeral keys, a warning on stderr, requests name their subject', async () => {
    const cli = await startCli(serveArgs(...transportArgs(transport)));
    expect(cli.stdout).toContain(`transport: plaintext (no TLS), ${transport} server`);
    expect(cli.stdout).toContain('workers: 1 (single process)');
    expect(cli.stdout).toContain('subjects: none');
    expect(cli.stderr).toMatch(/warn: .*EPHEMERAL/);
    const client = clients.jwt(cli.port);
    const made = await client.generateJwt({ algorithm: 'ES256', subject: 'cli@example.com' });
    expect(made.sub).toBe('cli@example.com');
    expect(cli.stdout).toContain(made.kid);
    expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
    // No pool configured: a request without subject is refused.
    expect((await callError(client.generateJwt({ algorithm: 'ES256' }))).code).toBe(status.INVALID_ARGUMENT);
  });

  it('reads its settings from the environment twins', async () => {
    const cli = await startCli(['serve'], {
      env: {
        JWT_GRPC_HOST: '127.0.0.1',
        JWT_GRPC_PORT: '0',
        JWT_GRPC_SUBJECTS: 'bench/fixtures/subjects.json',
        JWT_GRPC_ISSUER: 'https://env.example.test',
        JWT_GRPC_TTL: '600',
        JWT_GRPC_TRANSPORT: transport,
      },
    });
    expect(cli.stdout).toContain(`, ${transport} server`);
    expect(cli.stdout).toContain(`subjects: ${SUBJECTS.length} from bench/fixtures/subjects.json`);
    const made = await clients.jwt(cli.port).generateJwt({ algorithm: 'HS256' });
    expect(made.sub).toBe(SUBJECTS[0]);
    const { payload } = decodeJwt(made.jwt);
    expect(payload['iss']).toBe('https://env.example.test');
    expect(made.expires_at - (payload['iat'] as number)).toBe(600);
  });

  it('lets a flag win over its environment twin', async () => {
    const cli = await startCli(serveArgs(...transportArgs(transport), '--issuer', 'https://flag.example.test'), {
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
    const cli = await startCli(serveArgs(...transportArgs(transport), '--keys', file));
    expect(cli.stderr).not.toMatch(/EPHEMERAL|readable by group/);
    expect(cli.stdout).toContain('algorithms: ES256, HS256');
    const made = await clients.jwt(cli.port).generateJwt({ algorithm: 'ES256', subject: 's' });
    expect(made.kid).toBe(keys.keys[0]?.kid);
  });

  it('serves with the verification cache off (--verify-cache 0)', async () => {
    const cli = await startCli(serveArgs(...transportArgs(transport), '--verify-cache', '0'));
    const client = clients.jwt(cli.port);
    const made = await client.generateJwt({ algorithm: 'HS256', subject: 'uncached@example.com' });
    expect(await client.verifyJwt({ jwt: made.jwt })).toMatchObject({ valid: true, sub: 'uncached@example.com' });
  });

  it('exits 0 after SIGTERM', async () => {
    const cli = await startCli(serveArgs(...transportArgs(transport)));
    await clients.jwt(cli.port).generateJwt({ algorithm: 'HS256', subject: 's' });
    cli.signal('SIGTERM');
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.stderr).toContain('draining');
  });
});

describe('serve', () => {
  it('runs on http2 unless told otherwise', async () => {
    const cli = await startCli(serveArgs());
    expect(cli.stdout).toContain('transport: plaintext (no TLS), http2 server');
    expect((await clients.jwt(cli.port).generateJwt({ algorithm: 'HS256', subject: 's' })).sub).toBe('s');
  });

  it('exits 1 naming the file when the keys file is missing', async () => {
    const missing = join(tempDir(), 'no-such-keys.json');
    const result = await runCli(serveArgs('--keys', missing));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(missing);
    expect(result.stdout).not.toContain('listening');
  });

  it('exits 1 naming the line and column when the subjects file is not valid JSON', async () => {
    const file = join(tempDir(), 'subjects.json');
    writeFileSync(file, '[\n  "ada@example.com",\n  "bob@example.com"\n');
    const result = await runCli(serveArgs('--subjects', file));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`subjects file ${file}: not valid JSON (it ends early, at line 4 column 1)`);
  });

  it('exits 1 saying a PEM given as --keys is one, with the key file that names it', async () => {
    const pem = join(tempDir(), 'es256.pem');
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    writeFileSync(pem, key, { mode: 0o600 });
    const result = await runCli(serveArgs('--keys', pem));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(
      `jwt-grpc: key file ${pem} is a PEM file (PRIVATE KEY), not a JSON JWK Set: name it from a key file beside it, {"keys":[{"kid":"KID","alg":"ALG","pemFile":"es256.pem"}]} (docs/keys.md)`,
    );
    expect(result.stderr).not.toContain(key.split('\n')[1]);
  });

  it('a port in use: that is the first line, before any key is made', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const result = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port)]);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr.split('\n')[0]).toBe(
        `jwt-grpc: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      );
      expect(result.stderr).not.toContain('EPHEMERAL');
    } finally {
      taken.close();
    }
  });

  it('exits 1 naming the file when the subjects file is missing', async () => {
    const missing = join(tempDir(), 'no-such-subjects.json');
    const result = await runCli(serveArgs('--subjects', missing));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(missing);
  });
});

/** This process's environment without npm's variables: a child that looks started by npx only when a test says so. */
function envWithoutNpm(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
}

/** A detached child (a group of its own, killed whatever happens) whose output is kept. */
function launcher(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    cwd: options.cwd,
    env: options.env ?? envWithoutNpm(),
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  // A command that is not there (no npx on PATH) fails the test by its message, not by an unhandled event.
  child.once('error', (err) => (out.stderr += `${command}: ${err.message}`));
  return { child, out };
}

/** The serving pid of a banner in `text`, once there is one (0 until then). */
const bannerPid = (text: string): number => Number(/pids (\d+)/.exec(text)?.[1] ?? 0);
const bannerPort = (text: string): number => Number(/listening on 127\.0\.0\.1:(\d+)/.exec(text)?.[1] ?? 0);

/** The end of a shell script: exits once the server it started serves (it would watch an exited shell for nothing). */
const EXIT_ONCE_SERVING = (log: string): string => `until grep -q pids "${log}" 2>/dev/null; do sleep 0.05; done; exit 0`;

/**
 * Starts the server in the background of a shell that then exits (`nohup ... &`, `setsid`),
 * its output in a file; checks it still serves once its parent is gone, and stops it.
 */
async function outlivesItsShell(script: (serve: string, log: string) => string): Promise<void> {
  const log = join(tempDir(), 'serve.log');
  const serve = `"${process.execPath}" "${CLI_ENTRY}" ${serveArgs().join(' ')}`;
  const shell = launcher('sh', ['-c', script(serve, log)]);
  let pid = 0;
  try {
    const exited = new Promise((resolve) => shell.child.once('exit', resolve));
    const read = (): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    expect(await waitUntil(() => bannerPid(read()) > 0, 15_000, 20), `${read()}${shell.out.stderr}`).toBe(true);
    pid = bannerPid(read());
    await exited;
    // Several checks of the watch a server under npx runs: none of them may have fired.
    await sleep(PARENT_CHECK_MS * 4);
    expect(isAlive(pid), `server ${pid} stopped with its shell:\n${read()}`).toBe(true);
    expect((await clients.jwt(bannerPort(read())).generateJwt({ algorithm: 'HS256', subject: 's' })).sub).toBe('s');
    expect(read()).not.toContain('parent process');
    process.kill(pid, 'SIGTERM');
    expect(await waitUntil(() => !isAlive(pid), 10_000, 20), `server ${pid} did not stop on SIGTERM`).toBe(true);
  } finally {
    if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
    killGroup(shell.child.pid as number);
  }
}

describe('a server and the process that started it', () => {
  it('outlives a shell that exits after nohup ... &', async () => {
    await outlivesItsShell((serve, log) => `nohup ${serve} > "${log}" 2>&1 < /dev/null & ${EXIT_ONCE_SERVING(log)}`);
  });

  it('outlives a script that starts it with setsid', async () => {
    await outlivesItsShell((serve, log) => `setsid ${serve} > "${log}" 2>&1 < /dev/null & ${EXIT_ONCE_SERVING(log)}`);
  });

  it('ends when the npx that runs it is killed', async () => {
    // A project with the package installed: its bin linked where npx looks for it.
    const project = tempDir();
    writeFileSync(join(project, 'package.json'), '{"name":"app","version":"1.0.0","private":true}\n');
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(CLI_ENTRY, join(project, 'node_modules', '.bin', 'jwt-grpc'));
    const npx = launcher('npx', ['jwt-grpc', ...serveArgs()], {
      cwd: project,
      env: { ...envWithoutNpm(), npm_config_update_notifier: 'false', npm_config_fund: 'false' },
    });
    let pid = 0;
    try {
      expect(await waitUntil(() => bannerPid(npx.out.stdout) > 0, 30_000, 20), npx.out.stderr).toBe(true);
      pid = bannerPid(npx.out.stdout);
      npx.child.kill('SIGTERM');
      expect(await waitUntil(() => !isAlive(pid), 10_000, 20), `server ${pid} still running after npx ended`).toBe(true);
      expect(npx.out.stderr).toMatch(/parent process \d+ exited \(started by npx\): draining/);
    } finally {
      if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
      killGroup(npx.child.pid as number);
    }
  });

  it('--exit-with-parent: ends when its launcher ends (SIGTERM to a shell that does not pass it on)', async () => {
    const shell = launcher('sh', ['-c', `"${process.execPath}" "${CLI_ENTRY}" ${serveArgs('--exit-with-parent').join(' ')} & wait`]);
    let pid = 0;
    try {
      expect(await waitUntil(() => bannerPid(shell.out.stdout) > 0, 15_000, 20), shell.out.stderr).toBe(true);
      pid = bannerPid(shell.out.stdout);
      shell.child.kill('SIGTERM');
      expect(await waitUntil(() => !isAlive(pid), 5_000, 20), `server ${pid} still running after its launcher ended`).toBe(true);
      expect(shell.out.stderr).toMatch(/parent process \d+ exited \(--exit-with-parent\): draining/);
    } finally {
      if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
      killGroup(shell.child.pid as number);
    }
  });
});
