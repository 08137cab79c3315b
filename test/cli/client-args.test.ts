/**
 * The client commands' flags (src/cli/client-args.ts): token, verify and revoke parsed into
 * their arguments, --help per command, and each refusal naming the flag or argument; a
 * --target read as grpc-js reads it (src/cli/target.ts), for what stays on this machine.
 */
import { describe, expect, it } from 'vitest';
import { clientHelpText, parseClientArgs } from '../../src/cli/client-args.js';
import { targetAddresses, targetIsLocal } from '../../src/cli/target.js';

function refusal(command: 'token' | 'verify' | 'revoke', argv: string[]): string {
  try {
    parseClientArgs(command, argv);
  } catch (err) {
    expect((err as { code: string }).code).toBe('ERR_INVALID_OPTION');
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('parseClientArgs', () => {
  it('reads token flags, TLS flags and a ttl through the option table', () => {
    expect(
      parseClientArgs('token', [
        '--target',
        'h:1',
        '--alg',
        'ES256',
        '--sub',
        's',
        '--aud',
        'a',
        '--ttl',
        '60',
        '--tls-ca',
        'ca.pem',
        '--tls-server-name',
        'issuer',
      ]),
    ).toEqual({
      action: 'token',
      args: {
        tls: false,
        tlsCa: 'ca.pem',
        tlsCert: undefined,
        tlsKey: undefined,
        tlsServerName: 'issuer',
        target: 'h:1',
        alg: 'ES256',
        sub: 's',
        aud: 'a',
        ttlSeconds: 60,
      },
    });
    expect(parseClientArgs('token', ['--target', 'h:1', '--tls'])).toMatchObject({
      args: { tls: true, alg: '', sub: '', ttlSeconds: undefined },
    });
  });

  it('reads verify with exactly one token', () => {
    expect(parseClientArgs('verify', ['--target', 'h:1', '--aud', 'api', 'a.b.c'])).toMatchObject({
      action: 'verify',
      args: { target: 'h:1', token: 'a.b.c', aud: 'api', iss: undefined },
    });
    expect(refusal('verify', ['--target', 'h:1'])).toBe('option TOKEN: give exactly one token to verify, got 0');
    expect(refusal('verify', ['--target', 'h:1', 'a', 'b'])).toBe('option TOKEN: give exactly one token to verify, got 2');
  });

  it('reads revoke by token or by jti and exp, never both', () => {
    expect(parseClientArgs('revoke', ['--target', 'h:1', '--reason', 'leaked', 'a.b.c'])).toMatchObject({
      action: 'revoke',
      args: { token: 'a.b.c', jti: undefined, exp: undefined, reason: 'leaked' },
    });
    expect(
      parseClientArgs('revoke', ['--target', 'h:1', '--jti', 'j1', '--exp', '1800000000', '--admin-token-file', 'admin']),
    ).toMatchObject({
      args: { token: undefined, jti: 'j1', exp: 1_800_000_000, adminTokenFile: 'admin' },
    });
    expect(refusal('revoke', ['--target', 'h:1'])).toBe('option TOKEN/--jti: give a token, or --jti with --exp');
    expect(refusal('revoke', ['--target', 'h:1', '--jti', 'j', '--exp', '1', 'a.b.c'])).toBe(
      'option TOKEN/--jti: give a token, or --jti with --exp',
    );
    expect(refusal('revoke', ['--target', 'h:1', 'a', 'b'])).toBe('option TOKEN: give at most one token to revoke, got 2');
    expect(refusal('revoke', ['--target', 'h:1', '--jti', 'j'])).toBe('option --jti/--exp: give both or neither');
    expect(refusal('revoke', ['--target', 'h:1', '--jti', 'j', '--exp', '-5'])).toBe(
      'option --exp: must be whole seconds since the Unix epoch, got "-5"',
    );
    expect(refusal('revoke', ['--target', 'h:1', '--jti', 'j', '--exp', '1.5'])).toBe(
      'option --exp: must be whole seconds since the Unix epoch, got "1.5"',
    );
  });

  it('requires --target, refuses unknown flags and a token positional, naming the command', () => {
    expect(refusal('token', ['--alg', 'ES256'])).toBe('option --target: is required: the issuer, e.g. 127.0.0.1:50051');
    expect(refusal('verify', ['--target', '', 'x'])).toMatch(/^option --target: is required/);
    expect(refusal('token', ['--target', 'h:1', '--algo', 'ES256'])).toBe(
      'option --algo: is not a flag of jwt-grpc token; did you mean --alg?',
    );
    expect(refusal('token', ['--target', 'h:1', 'extra'])).toBe('unexpected argument "extra": jwt-grpc token takes flags only');
    expect(refusal('verify', ['--target', 'h:1', '--jti', 'x', 't'])).toBe('option --jti: is not a flag of jwt-grpc verify');
    expect(refusal('token', ['--target', 'h:1', '--ttl', '0'])).toMatch(/^option --ttl: /);
  });

  it('answers --help before checking anything else', () => {
    expect(parseClientArgs('revoke', ['-h'])).toEqual({ action: 'help', command: 'revoke' });
    expect(parseClientArgs('token', ['--help']), 'no --target needed').toEqual({ action: 'help', command: 'token' });
  });
});

describe('clientHelpText', () => {
  it('lists each command’s own flags and exit codes', () => {
    const revoke = clientHelpText('revoke');
    expect(revoke).toMatch(/^Usage:\n {2}jwt-grpc revoke --target HOST:PORT/);
    expect(revoke).toContain('  --admin-token-file FILE ');
    expect(revoke).toContain('Exit codes: 0 revoked, 1 the call failed (refused, bad token), 2 bad option.');
    expect(clientHelpText('token')).not.toContain('--admin-token-file');
    expect(clientHelpText('verify')).toContain('  --iss ISSUER ');
  });
});

describe('--target: the addresses it names, and whether they stay on this machine', () => {
  it.each([
    ['127.0.0.1:50051', [{ host: '127.0.0.1', port: 50051 }]],
    ['localhost', [{ host: 'localhost', port: undefined }]],
    ['[::1]:50051', [{ host: '::1', port: 50051 }]],
    ['::1', [{ host: '::1', port: undefined }]],
    ['dns:///jwt.internal:50051', [{ host: 'jwt.internal', port: 50051 }]],
    ['dns://8.8.8.8/jwt.internal', [{ host: 'jwt.internal', port: undefined }]],
    [
      'ipv4:127.0.0.1:1,10.0.0.2:2',
      [
        { host: '127.0.0.1', port: 1 },
        { host: '10.0.0.2', port: 2 },
      ],
    ],
    ['unix:/run/jwt.sock', []],
    ['xds:///jwt', []],
  ])('%s', (target, addresses) => {
    expect(targetAddresses(target)).toEqual(addresses);
  });

  it.each(['127.0.0.1:50051', 'localhost:1', '[::1]:1', 'dns:///localhost:1', 'ipv4:127.0.0.1:1,127.0.0.2:2', 'unix:/run/jwt.sock'])(
    '%s is this machine',
    (target) => expect(targetIsLocal(target)).toBe(true),
  );

  it.each([
    '10.0.0.1:50051',
    'jwt.internal:50051',
    'dns:///jwt.internal:50051',
    'ipv4:127.0.0.1:1,10.0.0.2:2',
    '0.0.0.0:1',
    'http://127.0.0.1:1',
    'xds:///jwt',
  ])('%s is not (or cannot be told to be)', (target) => expect(targetIsLocal(target)).toBe(false));
});
