/**
 * The command line (src/cli/args.ts), parsed without starting anything: the commands,
 * serve's flags and their JWT_GRPC_* twins (the flag wins), values sorted to the layer that
 * takes them, and every refusal naming the flag or variable as the user wrote it.
 */
import { describe, expect, it } from 'vitest';
import { type Command, type ServeArgs, parseCommand } from '../../src/cli/args.js';
import { PKCS11_MODULE_DIRS } from '../../src/keys/backends/pkcs11-custody.js';

function serve(argv: string[], env: NodeJS.ProcessEnv = {}): ServeArgs {
  const command = parseCommand(['serve', ...argv], env);
  if (command.kind !== 'serve') throw new Error(`not serve: ${command.kind}`);
  return command.args;
}

function refusal(argv: string[], env: NodeJS.ProcessEnv = {}): { code: string; message: string } {
  try {
    parseCommand(argv, env);
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('accepted');
}

describe('parseCommand: commands', () => {
  it.each([
    [[], 'help'],
    [['--help'], 'help'],
    [['-h'], 'help'],
    [['help'], 'help'],
    [['serve', '--help'], 'help'],
    [['--version'], 'version'],
    [['-v'], 'version'],
    [['version'], 'version'],
  ])('%j: %s', (argv, kind) => {
    expect(parseCommand(argv, {}).kind).toBe(kind);
  });

  it('hands keys and the client commands to their own parsers', () => {
    expect(parseCommand(['keys', '--help'], {})).toMatchObject({ kind: 'keys', args: { action: 'help' } } satisfies Partial<Command>);
    expect(parseCommand(['verify', '--help'], {})).toMatchObject({ kind: 'client', args: { action: 'help', command: 'verify' } });
  });

  it('refuses an unknown command by name, listing the commands when none is near', () => {
    expect(refusal(['launch'])).toEqual({
      code: 'ERR_INVALID_OPTION',
      message: 'unknown command "launch"; the commands are serve, keys, token, verify, revoke, help, version',
    });
  });
});

describe('parseCommand: serve', () => {
  it('takes defaults when nothing is given', () => {
    const args = serve([]);
    expect(args.cli).toMatchObject({ host: '0.0.0.0', port: 50_051, watchKeys: false, logFormat: 'text', logLevel: 'info' });
    expect(args.cluster).toMatchObject({ workers: 1, graceMs: 10_000 });
    expect(args.server).toEqual({});
    expect(args.files).toEqual({});
  });

  it('sorts flags and variables to the layer that takes them; a flag wins over its variable', () => {
    const args = serve(['--port', '0', '--ttl', '60', '--keys', 'keys.json', '--no-jti', '--grace-ms', '5'], {
      JWT_GRPC_PORT: '9999',
      JWT_GRPC_MAX_TTL: '120',
      JWT_GRPC_LOG_FORMAT: 'json',
      JWT_GRPC_HOST: '',
    });
    expect(args.cli).toMatchObject({ port: 0, logFormat: 'json', host: '0.0.0.0' });
    expect(args.server).toEqual({ defaultTtlSeconds: 60, maxTtlSeconds: 120, jti: false });
    expect(args.files).toEqual({ keys: 'keys.json' });
    expect(args.cluster).toMatchObject({ graceMs: 5 });
  });

  // A misspelt flag, a negative value and a bad value from a variable: test/cli/actionable-errors.test.ts.
  it('refuses an unknown JWT_GRPC_ variable with the nearest one, and lets the others pass', () => {
    expect(refusal(['serve'], { JWT_GRPC_PROT: '1' }).message).toBe(
      'option JWT_GRPC_PROT: is not an environment variable of jwt-grpc serve; did you mean JWT_GRPC_PORT?',
    );
    expect(refusal(['serve'], { JWT_GRPC_SOMETHING_ELSE: '1' }).message).toMatch(/jwt-grpc --help lists them$/);
    expect(() => serve([], { JWT_GRPC_WORKER: '1', OTHER_VARIABLE: 'x' }), 'the worker marker and other variables pass').not.toThrow();
    // The PIN of PKCS#11 keys without a pin-source, as `keys generate` reads it (docs/keys.md).
    expect(() => serve([], { JWT_GRPC_PKCS11_PIN: '1234' })).not.toThrow();
  });

  it('reads the PKCS#11 module directories from --pkcs11-module-dirs or its variable, default the system ones', () => {
    expect(serve([]).cli.pkcs11ModuleDirs).toEqual(PKCS11_MODULE_DIRS);
    expect(serve(['--pkcs11-module-dirs', '/opt/hsm/lib:/usr/lib/softhsm']).cli.pkcs11ModuleDirs).toEqual([
      '/opt/hsm/lib',
      '/usr/lib/softhsm',
    ]);
    expect(serve([], { JWT_GRPC_PKCS11_MODULE_DIRS: '/opt/hsm/lib' }).cli.pkcs11ModuleDirs).toEqual(['/opt/hsm/lib']);
    expect(refusal(['serve', '--pkcs11-module-dirs', 'lib']).message).toBe(
      'option --pkcs11-module-dirs: entry 0 must be an absolute directory without ., .. or a trailing /, got "lib"',
    );
  });

  it('refuses TLS files that do not go together, and --watch-keys with nothing to watch', () => {
    expect(refusal(['serve', '--tls-cert', 'c.pem']).message).toBe('option --tls-cert/--tls-key: give both or neither');
    expect(refusal(['serve', '--tls-key', 'k.pem']).message).toBe('option --tls-cert/--tls-key: give both or neither');
    expect(refusal(['serve', '--tls-client-ca', 'ca.pem']).message).toBe('option --tls-client-ca: needs --tls-cert and --tls-key');
    expect(refusal(['serve', '--watch-keys']).message).toBe('option --watch-keys: needs --keys or --policy: there is no file to watch');
    const mtls = ['--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--tls-client-ca', 'ca.pem'];
    expect(serve(['--watch-keys', '--policy', 'p.json', ...mtls]).cli.watchKeys).toBe(true);
  });

  it('refuses --policy without mutual TLS: no caller would have the certificate it names callers by', () => {
    const refused =
      'option --policy: needs mutual TLS, --tls-cert, --tls-key and --tls-client-ca: it names callers by their client certificate, and without one every GenerateJwt is refused (docs/policy.md)';
    expect(refusal(['serve', '--policy', 'p.json']).message).toBe(refused);
    expect(refusal(['serve', '--policy', 'p.json', '--tls-cert', 'c.pem', '--tls-key', 'k.pem']).message).toBe(refused);
    expect(refusal(['serve'], { JWT_GRPC_POLICY: 'p.json' }).message).toBe(refused);
    expect(serve(['--policy', 'p.json', '--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--tls-client-ca', 'ca.pem']).files.policy).toBe(
      'p.json',
    );
  });

  it('checks the rules across options, naming the flags', () => {
    expect(refusal(['serve', '--ttl', '100', '--max-ttl', '50']).message).toMatch(/--ttl/);
  });

  it('reads --protocols and --cors-origins as comma lists, refusing what no protocol or browser would name', () => {
    expect(serve(['--protocols', 'grpc,connect', '--cors-origins', 'https://app.example,http://localhost:8080']).server).toEqual({
      protocols: ['grpc', 'connect'],
      corsAllowedOrigins: ['https://app.example', 'http://localhost:8080'],
    });
    expect(refusal(['serve', '--protocols', 'grpc,soap']).message).toBe(
      'option --protocols: entry 1 must be one of grpc, grpc-web, connect, got "soap"',
    );
    expect(refusal(['serve', '--cors-origins', 'https://app.example/']).message).toMatch(
      /^option --cors-origins: entry 0 must be an origin/,
    );
    expect(refusal(['serve', '--transport', 'grpc-js', '--protocols', 'grpc-web']).message).toMatch(
      /^option --protocols: grpc-web needs transport 'http2': grpc-js cannot share its HTTP\/2 server/,
    );
    expect(refusal(['serve', '--transport', 'grpc-js', '--cors-origins', 'https://app.example']).message).toMatch(
      /^option --cors-origins: /,
    );
  });
});
