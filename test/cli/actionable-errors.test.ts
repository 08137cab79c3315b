/**
 * Errors a user can act on: each bad input of the CLI gets one line that names the flag (or
 * the variable) and what to do, never a stack trace, an OpenSSL string or a wire header.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../bench/kit/cli.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { parseCommand } from '../../src/cli/args.js';
import { runRevokeCommand, runTokenCommand, runVerifyCommand } from '../../src/cli/client-commands.js';
import { GrpcStatus, type GrpcStatusError, JwtGrpcError, exportKeys, generateKeys } from '../../src/lib/index.js';
import { closeAllServers, startIssuer } from '../../bench/kit/jwt-servers.js';
import { freePort } from '../../bench/kit/ports.js';

let certs: TestCerts;

beforeAll(() => {
  if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
  certs = makeTestCerts();
});
afterEach(() => closeAllServers(200));
afterAll(() => certs?.remove());

/** The message a call rejects with. */
async function failure(promise: Promise<unknown>): Promise<JwtGrpcError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(JwtGrpcError);
  return err as JwtGrpcError;
}

async function issuer(tls?: { requireClientCertificate: boolean }): Promise<string> {
  const options = tls === undefined ? undefined : { cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert, ...tls };
  return (await startIssuer({ keys: await generateKeys({ algorithms: ['ES256'] }) }, options)).target;
}

function parseError(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    parseCommand(argv, env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`parsed: ${argv.join(' ')}`);
}

describe('flags and variables', () => {
  it('a negative number is the flag\'s value, refused by its own check (not "argument is ambiguous")', () => {
    expect(parseError(['serve', '--port', '-1'])).toBe('option --port: must be an integer from 0 to 65535, got "-1"');
    expect(parseError(['serve', '--ttl', '-5'])).toBe('option --ttl: must be an integer from 1 to 315360000, got "-5"');
    expect(parseError(['token', '--target', 'x', '--alg', 'ES256', '--sub', 'a', '--ttl', '-5'])).toMatch(/^option --ttl: .*got "-5"$/);
  });

  it('a bad value from the environment names the variable that set it', () => {
    expect(parseError(['serve'], { JWT_GRPC_PORT: 'abc' })).toBe('option JWT_GRPC_PORT: must be an integer from 0 to 65535, got "abc"');
    expect(parseError(['serve', '--port', 'abc'], { JWT_GRPC_PORT: '1' })).toBe(
      'option --port: must be an integer from 0 to 65535, got "abc"',
    );
  });
});

describe('misspelt flags and commands: the nearest name', () => {
  it.each([
    [['serv'], 'unknown command "serv"; did you mean serve?'],
    [['keys', 'genrate'], 'unknown keys command "genrate"; did you mean generate?'],
    [['serve', '--prot', '1'], 'option --prot: is not a flag of jwt-grpc serve; did you mean --port?'],
    [['serve', '--no-helth'], 'option --no-helth: is not a flag of jwt-grpc serve; did you mean --no-health?'],
    [['token', '--targt', 'h:1'], 'option --targt: is not a flag of jwt-grpc token; did you mean --target?'],
    [['revoke', '--admin-token', 'f'], 'option --admin-token: is not a flag of jwt-grpc revoke; did you mean --admin-token-file?'],
    [['keys', 'generate', '--algo', 'ES256'], 'option --algo: is not a flag of jwt-grpc keys generate; did you mean --alg?'],
    [['serve', '--port'], 'option --port: needs a value'],
    [['serve', '--watch-keys=yes'], 'option --watch-keys: takes no value: give the flag alone'],
  ])('%j', (argv, message) => {
    expect(parseError(argv)).toBe(message);
  });
});

describe('serve with TLS files that are not a PEM certificate and key', () => {
  it.each([
    ['--tls-cert', 'not-pem', 'server.key', '--tls-cert: FILE is not a PEM certificate (no -----BEGIN CERTIFICATE----- line)'],
    ['--tls-key', 'server.crt', 'not-pem', '--tls-key: FILE is not a PEM private key (no -----BEGIN ... PRIVATE KEY----- line)'],
  ])('%s: one line naming the flag and the file, exit 1', async (_flag, cert, key, expected) => {
    const notPem = join(certs.dir, 'not-pem');
    writeFileSync(notPem, 'this is not PEM\n', { mode: 0o600 });
    const at = (name: string): string => join(certs.dir, name);
    const run = await runCli(['serve', '--port', '0', '--tls-cert', at(cert), '--tls-key', at(key)]);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(run.stderr.trimEnd().split('\n').at(-1)).toBe(`jwt-grpc: ${expected.replace('FILE', notPem)}`);
  });

  it('a certificate and a key that are no pair: one line naming both files', async () => {
    const { files } = certs;
    const run = await runCli(['serve', '--port', '0', '--tls-cert', files.clientCert, '--tls-key', files.serverKey]);
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n').at(-1)).toBe(
      `jwt-grpc: --tls-cert/--tls-key: ${files.clientCert} and ${files.serverKey} are not a certificate and its private key (x509 certificate routines::key values mismatch)`,
    );
  });
});

describe('the CLI client on the wrong kind of port', () => {
  const ask = (target: string, tls: object) =>
    runTokenCommand({ target, alg: 'ES256', sub: 'ada', ...tls }, { stdout: { write: () => true } });

  it('without a client certificate on a mutual TLS port: names --tls-cert and --tls-key', async () => {
    const target = await issuer({ requireClientCertificate: true });
    const err = await failure(ask(target, { tlsCa: certs.files.caCert, tlsServerName: 'localhost' }));
    expect(err.message).toBe(
      `cannot reach ${target}: the server asks for a client certificate (mutual TLS): give --tls-cert FILE and --tls-key FILE`,
    );
    expect((err as GrpcStatusError).status).toBe(GrpcStatus.UNAVAILABLE);
  });

  it('in plaintext on a TLS port: names --tls', async () => {
    const target = await issuer({ requireClientCertificate: false });
    const err = await failure(ask(target, {}));
    expect(err.message).toBe(
      `cannot reach ${target}: the connection closed before any answer, as a TLS server closes a plaintext client: if the server serves TLS, add --tls (and --tls-ca FILE for a private CA)`,
    );
  });

  it('with TLS on a plaintext port: says to drop --tls', async () => {
    const target = await issuer();
    const err = await failure(ask(target, { tls: true }));
    expect(err.message).toBe(`cannot reach ${target}: the server answered in plaintext: drop --tls and the other --tls-* options`);
  });
});

describe('the CLI client names its flags, not the request fields', () => {
  it("a --ttl over the issuer's --max-ttl: names --ttl, and what leaving it out gives", async () => {
    const { target } = await startIssuer({
      keys: await generateKeys({ algorithms: ['ES256'] }),
      maxTtlSeconds: 600,
      defaultTtlSeconds: 300,
    });
    const err = await failure(runTokenCommand({ target, alg: 'ES256', sub: 'ada', ttlSeconds: 601 }, { stdout: { write: () => true } }));
    expect([(err as GrpcStatusError).status, err.message]).toEqual([
      GrpcStatus.INVALID_ARGUMENT,
      'the issuer refused --ttl: must be from 1 to 600 (without --ttl: 300)',
    ]);
  });

  it('a --jti and --exp that has passed: names --exp', async () => {
    const secret = join(certs.dir, 'admin-token-exp');
    writeFileSync(secret, 'an-admin-secret-of-32-characters\n', { mode: 0o600 });
    const { target } = await startIssuer({ keys: await generateKeys({ algorithms: ['ES256'] }), adminTokenFile: secret });
    const err = await failure(
      runRevokeCommand({ target, jti: 'x', exp: 1_000_000_000, adminTokenFile: secret }, { stdout: { write: () => true } }),
    );
    expect(err.message).toBe('the issuer refused --exp: has passed; the token has expired already');
  });
});

describe('revoke names the CLI flags', () => {
  it('a server without an admin credential: names --admin-token-file and --policy', async () => {
    const target = await issuer();
    const err = await failure(runRevokeCommand({ target, jti: 'x', exp: 2_000_000_000 }, { stdout: { write: () => true } }));
    expect(err.message).toMatch(/^RevokeJwt is off: .*--admin-token-file FILE.*--policy/);
  });

  it('a revoke without the secret: names jwt-grpc revoke --admin-token-file', async () => {
    const secret = join(certs.dir, 'admin-token');
    writeFileSync(secret, 'an-admin-secret-of-32-characters\n', { mode: 0o600 });
    const { target } = await startIssuer({ keys: await generateKeys({ algorithms: ['ES256'] }), adminTokenFile: secret });
    const err = await failure(runRevokeCommand({ target, jti: 'x', exp: 2_000_000_000 }, { stdout: { write: () => true } }));
    expect([(err as GrpcStatusError).status, err.message]).toEqual([
      GrpcStatus.UNAUTHENTICATED,
      'RevokeJwt needs the admin secret: jwt-grpc revoke --admin-token-file FILE (it sends "authorization: Bearer SECRET"), or a client certificate the policy lists under revokers',
    ]);
  });
});

describe('the CLI client on a target it cannot use', () => {
  const ask = (target: string, tls: object = {}) =>
    runTokenCommand({ target, alg: 'ES256', sub: 'ada', ...tls }, { stdout: { write: () => true } });

  it('a host without a port: says it dialled 443 and to add :PORT', async () => {
    const err = await failure(ask('127.0.0.1'));
    expect(err.message).toBe(
      "cannot reach 127.0.0.1: --target names no port, so it dialled 127.0.0.1:443: add :PORT, the server's --port (e.g. 127.0.0.1:50051)",
    );
  });

  it('a URL: refused as a bad --target, naming the HOST:PORT to give', async () => {
    const err = await failure(ask('http://127.0.0.1:50051/'));
    expect([err.code, err.message]).toEqual([
      'ERR_INVALID_OPTION',
      'option --target: give HOST:PORT, not a URL: 127.0.0.1:50051, or dns:///HOST:PORT',
    ]);
  });

  it('a port nothing listens on: says so', async () => {
    const target = `127.0.0.1:${await freePort()}`;
    const err = await failure(ask(target));
    expect(err.message).toBe(`cannot reach ${target}: nothing listening on ${target}: is the server running, and is this its --port?`);
  });

  it.each([
    ['metrics', 'metricsPort'],
    ['discovery', 'httpPort'],
  ] as const)('the %s port: not a gRPC port', async (_name, option) => {
    const { server } = await startIssuer({
      keys: await generateKeys({ algorithms: ['ES256'] }),
      [option]: 0,
      ...(option === 'httpPort' ? { issuer: 'https://issuer.example' } : {}),
    });
    const target = `127.0.0.1:${server[option]}`;
    const err = await failure(ask(target));
    expect(err.message).toBe(
      `cannot reach ${target}: not a gRPC port: is it the metrics or discovery port? --target takes the server's --port`,
    );
  });

  it('a --tls-ca that did not sign the server certificate: names the file', async () => {
    const target = await issuer({ requireClientCertificate: false });
    const other = makeTestCerts();
    try {
      const err = await failure(ask(target, { tlsCa: other.files.caCert, tlsServerName: 'localhost' }));
      expect(err.message).toBe(
        `cannot reach ${target}: the server's certificate is not signed by --tls-ca ${other.files.caCert}: give the CA that signed it`,
      );
    } finally {
      other.remove();
    }
  });
});

describe('revoke and the admin secret in plaintext', () => {
  async function revocable(): Promise<{ port: number; secret: string; token: string }> {
    const secret = join(certs.dir, 'admin-token');
    writeFileSync(secret, 'an-admin-secret-of-32-characters\n', { mode: 0o600 });
    const { port } = await startIssuer({ keys: await generateKeys({ algorithms: ['ES256'] }), adminTokenFile: secret });
    const printed: string[] = [];
    await runTokenCommand(
      { target: `127.0.0.1:${port}`, alg: 'ES256', sub: 'ada' },
      { stdout: { write: (line: string) => printed.push(line) } },
    );
    return { port, secret, token: (printed[0] as string).trim() };
  }
  const quiet = { stdout: { write: () => true } };
  const verdict = async (target: string, token: string): Promise<number> => runVerifyCommand({ target, token }, quiet);

  it('refuses to send it without TLS to an address that is not loopback, and sends nothing', async () => {
    const { port, secret, token } = await revocable();
    // 0.0.0.0 is no loopback address, yet a connection to it reaches this machine: only the refusal keeps the token valid.
    const err = await failure(runRevokeCommand({ target: `0.0.0.0:${port}`, token, adminTokenFile: secret }, quiet));
    expect([err.code, err.message]).toEqual([
      'ERR_INVALID_OPTION',
      `option --admin-token-file: would send the admin secret to 0.0.0.0:${port} in plaintext, readable by anyone on the path: add --tls (and --tls-ca FILE for a private CA), or --allow-plaintext-admin-token if the network is trusted`,
    ]);
    expect(await verdict(`127.0.0.1:${port}`, token), 'still valid').toBe(0);
  });

  it('sends it to loopback, and elsewhere with --allow-plaintext-admin-token', async () => {
    const local = await revocable();
    expect(await runRevokeCommand({ target: `localhost:${local.port}`, token: local.token, adminTokenFile: local.secret }, quiet)).toBe(0);
    expect(await verdict(`127.0.0.1:${local.port}`, local.token), 'revoked').toBe(1);
    const allowed = await revocable();
    const args = {
      target: `0.0.0.0:${allowed.port}`,
      token: allowed.token,
      adminTokenFile: allowed.secret,
      allowPlaintextAdminToken: true,
    };
    expect(await runRevokeCommand(args, quiet)).toBe(0);
    expect(await verdict(`127.0.0.1:${allowed.port}`, allowed.token), 'revoked').toBe(1);
  });
});

describe('a key backend that is not set up: one line saying what to set', () => {
  /** The AWS settings a developer's shell may hold, cleared: each case sets only its own. */
  const AWS = ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];
  const AWS_ENDPOINTS = ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_KMS'];
  const NO_FILES = { AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };
  const CREDENTIALS = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'not-a-real-secret' };
  afterEach(() => vi.unstubAllEnvs());

  async function keysError(argv: string[], env: Record<string, string>): Promise<string> {
    for (const name of [...AWS, ...AWS_ENDPOINTS]) vi.stubEnv(name, undefined);
    const run = await runCli(['keys', ...argv], { env: { ...NO_FILES, ...env } });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(run.stderr.split('\n').filter((line) => line !== '')).toHaveLength(1);
    return run.stderr.trimEnd();
  }
  const out = (): string => join(certs.dir, `kms-${Math.random().toString(36).slice(2)}.json`);

  it.each([
    ['no region', {}, 'no AWS region: set AWS_REGION (e.g. eu-west-1), or a region in the config of AWS_PROFILE'],
    [
      'no credentials',
      { AWS_REGION: 'eu-west-1' },
      'no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an instance or task role',
    ],
  ])('generate --kms with %s', async (_case, env, hint) => {
    expect(await keysError(['generate', '--alg', 'ES256', '--kms', 'alias/jwt', '--out', out()], env)).toBe(
      `jwt-grpc: kms key alias/jwt: cannot make the key: ${hint}`,
    );
  });

  it('rotate --kms with no reachable endpoint: names the endpoint', async () => {
    const file = out();
    writeFileSync(file, `${JSON.stringify(exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }))}\n`, {
      mode: 0o600,
    });
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    expect(
      await keysError(['rotate', '--keys', file, '--alg', 'ES256', '--kms', 'alias/jwt'], { ...CREDENTIALS, AWS_ENDPOINT_URL: endpoint }),
    ).toBe(
      `jwt-grpc: kms key alias/jwt: cannot make the key: cannot reach the KMS endpoint ${endpoint} (ECONNREFUSED): check AWS_ENDPOINT_URL and that it is up`,
    );
  });

  it.each([
    ['serve', (file: string) => ['serve', '--host', '127.0.0.1', '--port', '0', '--keys', file]],
    ['keys public', (file: string) => ['keys', 'public', '--keys', file]],
  ])('%s on a key file with a kms key and no region: names the key, and what to set', async (_command, argv) => {
    const file = out();
    const { keys } = exportKeys(await generateKeys({ algorithms: ['ES256'] }));
    // A handle entry: the kms reference and the public key `keys generate --kms` caches.
    const entry = { ...keys[0], kid: 'signer', kms: 'alias/jwt' };
    writeFileSync(file, JSON.stringify({ keys: [entry] }), { mode: 0o600 });
    for (const name of [...AWS, ...AWS_ENDPOINTS]) vi.stubEnv(name, undefined);
    const run = await runCli(argv(file), { env: NO_FILES });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /^jwt-grpc: key signer: kms key alias\/jwt: .*: no AWS region: set AWS_REGION \(e\.g\. eu-west-1\), or a region in the config of AWS_PROFILE$/,
    );
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
  });

  it('generate --pkcs11 with a module outside the allowed directories: names the module and the flag', async () => {
    const notALibrary = join(certs.dir, 'not-a-library.so');
    writeFileSync(notALibrary, 'not an ELF file\n');
    const line = await keysError(
      ['generate', '--alg', 'ES256', '--pkcs11', `pkcs11:object=jwt?module-path=${notALibrary}`, '--out', out()],
      {},
    );
    expect(line).toMatch(
      new RegExp(
        `^jwt-grpc: pkcs11 key pkcs11:object=jwt: the module ${notALibrary} is outside the allowed module directories \\(.*; --pkcs11-module-dirs\\)$`,
      ),
    );
  });
});
