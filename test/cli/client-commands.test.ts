/** The token, verify and revoke command implementations, run as functions against an issuer on mutual TLS. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runRevokeCommand, runTokenCommand, runVerifyCommand } from '../../src/cli/client-commands.js';
import { parseClientArgs } from '../../src/cli/client-args.js';
import { GrpcStatusError, type JwtServer, GrpcStatus, createJwtServer, generateKeys, silentLogger } from '../../src/lib/index.js';
import { type TestCerts, hasOpenssl, makeTestCerts, mutualTlsListen } from '../../bench/kit/certs.js';

let certs: TestCerts;
let server: JwtServer | undefined;

beforeAll(() => {
  if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
  certs = makeTestCerts();
});
afterEach(async () => {
  await server?.close({ graceMs: 200 });
  server = undefined;
});
afterAll(() => certs?.remove());

/** An issuer that requires client certificates signed by the test CA. */
async function startMutualTlsIssuer(): Promise<string> {
  server = createJwtServer({ keys: await generateKeys({ algorithms: ['ES256'] }), issuer: 'https://issuer.test', logger: silentLogger });
  return `127.0.0.1:${await server.listen('127.0.0.1:0', mutualTlsListen(certs))}`;
}

function output(): { stdout: { write(text: string): boolean }; text(): string } {
  let written = '';
  return {
    stdout: {
      write(text: string) {
        written += text;
        return true;
      },
    },
    text: () => written,
  };
}

describe('runTokenCommand and runVerifyCommand', () => {
  it('print a token, then the verdict on it (exit 0), over mutual TLS', async () => {
    const target = await startMutualTlsIssuer();
    const { files } = certs;
    const tls = { tlsCa: files.caCert, tlsCert: files.clientCert, tlsKey: files.clientKey, tlsServerName: 'localhost' };
    const made = output();
    expect(await runTokenCommand({ target, alg: 'ES256', sub: 'ada@example.com', aud: 'api', ttlSeconds: 120, ...tls }, made)).toBe(0);
    const token = made.text().trim();
    expect(made.text()).toBe(`${token}\n`);
    expect(token.split('.')).toHaveLength(3);

    const verdict = output();
    expect(await runVerifyCommand({ target, token, aud: 'api', iss: 'https://issuer.test', ...tls }, verdict)).toBe(0);
    const parsed = JSON.parse(verdict.text()) as { valid: boolean; sub: string; claims: Record<string, number | string> };
    expect(parsed).toMatchObject({ valid: true, sub: 'ada@example.com', claims: { aud: 'api', iss: 'https://issuer.test' } });
    expect(Number(parsed.claims['exp']) - Number(parsed.claims['iat'])).toBe(120);

    const wrongAudience = output();
    expect(await runVerifyCommand({ target, token, aud: 'other', ...tls }, wrongAudience)).toBe(1);
    expect(JSON.parse(wrongAudience.text())).toEqual({ valid: false, reason: 'AUDIENCE_MISMATCH' });

    const tampered = output();
    expect(await runVerifyCommand({ target, token: `${token.slice(0, -4)}AAAA`, ...tls }, tampered)).toBe(1);
    expect(JSON.parse(tampered.text())).toEqual({ valid: false, reason: 'BAD_SIGNATURE' });
  });

  it('reject with UNAVAILABLE when the issuer refuses the connection (no client certificate)', async () => {
    const target = await startMutualTlsIssuer();
    const err = await runTokenCommand(
      { target, alg: 'ES256', sub: 's', tlsCa: certs.files.caCert, tlsServerName: 'localhost' },
      output(),
    ).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(err).toBeInstanceOf(GrpcStatusError);
    expect((err as GrpcStatusError).status).toBe(GrpcStatus.UNAVAILABLE);
  });

  it('refuse bad options before connecting, naming them', async () => {
    await expect(runTokenCommand({ target: '127.0.0.1:1', alg: 'none', sub: 's' }, output())).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: '--alg',
    });
    await expect(runTokenCommand({ target: '127.0.0.1:1', alg: 'ES256', sub: '' }, output())).rejects.toMatchObject({ field: '--sub' });
    await expect(runVerifyCommand({ target: '', token: 'x' }, output())).rejects.toMatchObject({ field: '--target' });
    await expect(runVerifyCommand({ target: '127.0.0.1:1', token: 'x', tlsCert: certs.files.clientCert }, output())).rejects.toMatchObject({
      field: '--tls-cert/--tls-key',
    });
    await expect(runVerifyCommand({ target: '127.0.0.1:1', token: 'x', tlsCa: '/nonexistent/ca.pem' }, output())).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: expect.stringContaining('/nonexistent/ca.pem'),
    });
  });
});

describe('runRevokeCommand and the revoke flags', () => {
  it('revokes over mutual TLS with the admin secret from a file, and prints the answer', async () => {
    const secretFile = join(certs.dir, 'admin-token');
    writeFileSync(secretFile, 'client-commands-admin-secret\n');
    server = createJwtServer({ keys: await generateKeys({ algorithms: ['ES256'] }), adminTokenFile: secretFile, logger: silentLogger });
    const target = `127.0.0.1:${await server.listen('127.0.0.1:0', mutualTlsListen(certs))}`;
    const client = {
      target,
      tlsCa: certs.files.caCert,
      tlsCert: certs.files.clientCert,
      tlsKey: certs.files.clientKey,
      tlsServerName: 'localhost',
    };
    const token = output();
    await runTokenCommand({ ...client, alg: 'ES256', sub: 'ada' }, token);
    const jwt = token.text().trim();
    const printed = output();
    expect(await runRevokeCommand({ ...client, token: jwt, adminTokenFile: secretFile }, printed)).toBe(0);
    expect(JSON.parse(printed.text())).toMatchObject({ revoked: true });
    const verdict = output();
    expect(await runVerifyCommand({ ...client, token: jwt }, verdict)).toBe(1);
    expect(JSON.parse(verdict.text())).toEqual({ valid: false, reason: 'REVOKED' });
    const refused = await runRevokeCommand({ ...client, token: jwt }, output()).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(GrpcStatusError);
    expect((refused as GrpcStatusError).status).toBe(GrpcStatus.UNAUTHENTICATED);
  });

  it.each([
    [['--target', 'h:1'], 'TOKEN/--jti'],
    [['--target', 'h:1', '--jti', 'abc'], '--jti/--exp'],
    [['--target', 'h:1', '--jti', 'abc', '--exp', '12', 'TOKEN'], 'TOKEN/--jti'],
    [['--target', 'h:1', '--jti', 'abc', '--exp', 'soon'], '--exp'],
    [['--target', 'h:1', 'a', 'b'], 'TOKEN'],
  ])('refuses %j naming %s', (argv, field) => {
    expect(() => parseClientArgs('revoke', argv)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field }));
  });

  it('parses a revocation by jti', () => {
    expect(
      parseClientArgs('revoke', ['--target', 'h:1', '--jti', 'abc', '--exp', '1767225600', '--reason', 'why', '--admin-token-file', 'f']),
    ).toMatchObject({
      action: 'revoke',
      args: { target: 'h:1', jti: 'abc', exp: 1767225600, reason: 'why', adminTokenFile: 'f' },
    });
  });
});
