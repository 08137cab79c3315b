/**
 * `jwt-grpc token` and `jwt-grpc verify` as a user runs them, against a running
 * `jwt-grpc serve`: the token printed verifies, the verdict's exit code, bad flags.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { decodeJwt } from '../../bench/kit/grpc-clients.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';

let server: CliServer;
let target: string;

beforeAll(async () => {
  server = await startCli(serveArgs('--issuer', 'https://issuer.test'));
  target = `127.0.0.1:${server.port}`;
});

afterAll(() => killAll());

describe('jwt-grpc token and verify', () => {
  it('prints a token the issuer signed, and verify prints its claims as JSON with exit 0', async () => {
    const made = await runCli(['token', '--target', target, '--alg', 'ES256', '--sub', 'ada@example.com', '--aud', 'api', '--ttl', '600']);
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.trim();
    const { header, payload } = decodeJwt(token);
    expect(header['alg']).toBe('ES256');
    expect(payload).toMatchObject({ sub: 'ada@example.com', aud: 'api', iss: 'https://issuer.test' });
    expect((payload['exp'] as number) - (payload['iat'] as number)).toBe(600);

    const verdict = await runCli(['verify', '--target', target, '--aud', 'api', '--iss', 'https://issuer.test', token]);
    expect(verdict.code, verdict.stderr).toBe(0);
    expect(JSON.parse(verdict.stdout)).toEqual({ valid: true, sub: 'ada@example.com', claims: payload });
  });

  it('verify exits 1 with the reason when the token is not valid for what is asked', async () => {
    const token = (await runCli(['token', '--target', target, '--alg', 'HS256', '--sub', 'bob@example.com'])).stdout.trim();
    const wrongAudience = await runCli(['verify', '--target', target, '--aud', 'billing', token]);
    expect(wrongAudience.code).toBe(1);
    expect(JSON.parse(wrongAudience.stdout)).toEqual({ valid: false, reason: 'AUDIENCE_MISMATCH' });
    const tampered = await runCli(['verify', '--target', target, `${token.slice(0, -4)}AAAA`]);
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout)).toEqual({ valid: false, reason: 'BAD_SIGNATURE' });
  });

  it.each([
    [['token', '--alg', 'ES256', '--sub', 'a'], /--target: is required/],
    [['token', '--target', '127.0.0.1:1', '--alg', 'es256', '--sub', 'a'], /--alg: must be one of/],
    [['token', '--target', '127.0.0.1:1', '--alg', 'ES256'], /--sub: is required/],
    [['token', '--target', '127.0.0.1:1', '--alg', 'ES256', '--sub', 'a', '--ttl', '-5'], /--ttl/],
    [['verify', '--target', '127.0.0.1:1'], /TOKEN: give exactly one token/],
    [['verify', '--target', '127.0.0.1:1', '--bogus', 'x'], /option --bogus: is not a flag of jwt-grpc verify/],
    [
      ['token', '--target', '127.0.0.1:1', '--alg', 'ES256', '--sub', 'a', '--tls-cert', 'c.pem'],
      /--tls-cert\/--tls-key: give both or neither/,
    ],
  ])('%j exits 2 naming the problem', async (argv, message) => {
    const result = await runCli(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/Run 'jwt-grpc (token|verify) --help'/);
  });

  it('exits 1 naming the issuer when it cannot be reached', async () => {
    // A port nothing listens on: the client fails the call as UNAVAILABLE, said as one line.
    const result = await runCli(['token', '--target', '127.0.0.1:1', '--alg', 'ES256', '--sub', 'a']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'jwt-grpc: cannot reach 127.0.0.1:1: nothing listening on 127.0.0.1:1: is the server running, and is this its --port?\n',
    );
    expect(result.stdout).toBe('');
  });

  it('--help of each prints its flags and exits 0', async () => {
    for (const command of ['token', 'verify']) {
      const result = await runCli([command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('--target HOST:PORT');
      expect(result.stdout).toContain('--tls-ca FILE');
    }
  });
});

describe.skipIf(!hasOpenssl())('jwt-grpc token over TLS to an IP address', () => {
  let certs: TestCerts;
  let tlsServer: CliServer;

  beforeAll(async () => {
    certs = makeTestCerts();
    tlsServer = await startCli(serveArgs('--tls-cert', certs.files.serverCert, '--tls-key', certs.files.serverKey));
  });
  afterAll(() => certs?.remove());

  it('prints no DEP0123 warning (SNI with an IP address) and checks the certificate against the IP', async () => {
    const made = await runCli([
      'token',
      '--target',
      `127.0.0.1:${tlsServer.port}`,
      '--tls-ca',
      certs.files.caCert,
      '--alg',
      'ES256',
      '--sub',
      'a',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toBe('');
    expect(made.stdout.split('.')).toHaveLength(3);
  });
});
