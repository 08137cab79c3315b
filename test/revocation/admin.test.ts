/**
 * Who may call RevokeJwt: a caller the policy lists as a revoker, or the admin secret as a
 * bearer token; each refusal with its status and a message that names the remedy, never the
 * secret. And the admin secret file: read once, refused when short, spaced or unreadable.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectedBy, thrownBy } from '../../bench/kit/thrown.js';
import { JwtGrpcError } from '../../src/base/errors.js';
import { type AdminSecret, MIN_ADMIN_SECRET_LENGTH, authorizeRevoke, readAdminSecret } from '../../src/revocation/admin.js';
import { CallMetadata } from '../../src/contracts/handler-api.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-admin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'correct-horse-battery-staple';
const quiet = { warn: () => {} };

function secretFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

function call(caller?: string, authorization?: string): Parameters<typeof authorizeRevoke>[0] {
  const metadata = new CallMetadata();
  if (authorization !== undefined) metadata.set('authorization', authorization);
  return { caller: caller === undefined ? undefined : { id: caller, certificate: Buffer.alloc(0), thumbprint: '' }, metadata };
}

describe('readAdminSecret', () => {
  it('reads the secret without its final newline, and the same secret authorizes', async () => {
    const secret = await readAdminSecret(secretFile('ok', `${SECRET}\n`), 'adminTokenFile', quiet);
    expect(authorizeRevoke(call(undefined, `Bearer ${SECRET}`), secret, undefined)).toBe('admin-token');
  });

  it(`refuses a secret shorter than ${MIN_ADMIN_SECRET_LENGTH} characters, naming the file and never the secret`, async () => {
    const path = secretFile('short', 'fifteen-chars!!');
    const err = await rejectedBy(JwtGrpcError, readAdminSecret(path, 'adminTokenFile', quiet));
    expect([err.code, err.field, err.message]).toEqual([
      'ERR_INVALID_OPTION',
      'adminTokenFile',
      `adminTokenFile: ${path} must hold a secret of at least 16 characters`,
    ]);
    expect(err.message).not.toContain('fifteen');
    await expect(readAdminSecret(secretFile('sixteen', 'sixteen-chars!!!'), 'adminTokenFile', quiet)).resolves.toBeDefined();
  });

  it('refuses a secret with whitespace inside, or two lines', async () => {
    for (const [name, text] of [
      ['space', 'a secret with spaces'],
      ['lines', `${SECRET}\n${SECRET}\n`],
    ]) {
      const path = secretFile(name as string, text as string);
      const err = await rejectedBy(JwtGrpcError, readAdminSecret(path, '--admin-token-file', quiet));
      expect([err.code, err.message]).toEqual(['ERR_INVALID_OPTION', `--admin-token-file: ${path}: the secret may not contain whitespace`]);
    }
  });

  it('refuses a file it cannot read with ERR_FILE and the errno code', async () => {
    const path = join(dir, 'missing');
    const err = await rejectedBy(JwtGrpcError, readAdminSecret(path, 'adminTokenFile', quiet));
    expect([err.code, err.field, err.message]).toEqual(['ERR_FILE', 'adminTokenFile', `adminTokenFile: cannot read ${path}: ENOENT`]);
  });
});

describe('authorizeRevoke', () => {
  let secret: AdminSecret;
  beforeAll(async () => {
    secret = await readAdminSecret(secretFile('secret', SECRET), 'adminTokenFile', quiet);
  });

  it('lets a listed revoker in by its certificate, with or without an admin secret', () => {
    expect(authorizeRevoke(call('spiffe://example.org/ops'), undefined, ['spiffe://example.org/ops'])).toBe('spiffe://example.org/ops');
    expect(authorizeRevoke(call('spiffe://example.org/ops'), secret, ['spiffe://example.org/ops'])).toBe('spiffe://example.org/ops');
  });

  it('takes the bearer scheme in any case', () => {
    expect(authorizeRevoke(call(undefined, `bearer ${SECRET}`), secret, undefined)).toBe('admin-token');
  });

  it('refuses everyone with ERR_PERMISSION_DENIED when neither a secret nor revokers are configured', () => {
    for (const revokers of [undefined, []]) {
      const err = thrownBy(JwtGrpcError, () => authorizeRevoke(call('spiffe://example.org/ops', `Bearer ${SECRET}`), undefined, revokers));
      expect(err.code).toBe('ERR_PERMISSION_DENIED');
      expect(err.message).toMatch(/^RevokeJwt is off: the server has no admin credential \(start it with --admin-token-file FILE/);
    }
  });

  it('refuses a caller not among the revokers with ERR_PERMISSION_DENIED naming it, when there is no secret', () => {
    let err = thrownBy(JwtGrpcError, () => authorizeRevoke(call('dns:intruder.example'), undefined, ['spiffe://example.org/ops']));
    expect([err.code, err.message]).toEqual(['ERR_PERMISSION_DENIED', 'caller "dns:intruder.example" is not among the policy\'s revokers']);
    err = thrownBy(JwtGrpcError, () => authorizeRevoke(call(), undefined, ['spiffe://example.org/ops']));
    expect(err.message).toBe("caller (no client certificate) is not among the policy's revokers");
  });

  it('refuses a call without a bearer token with ERR_UNAUTHENTICATED saying how to send one', () => {
    for (const header of [undefined, SECRET, 'Basic abc', `Bearer ${SECRET} extra`]) {
      const err = thrownBy(JwtGrpcError, () => authorizeRevoke(call(undefined, header), secret, undefined));
      expect(err.code, String(header)).toBe('ERR_UNAUTHENTICATED');
      expect(err.message).toMatch(/^RevokeJwt needs the admin secret: jwt-grpc revoke --admin-token-file FILE/);
    }
  });

  it('refuses a wrong secret with ERR_UNAUTHENTICATED, never echoing what was sent', () => {
    const err = thrownBy(JwtGrpcError, () =>
      authorizeRevoke(call('dns:other.example', 'Bearer guessed-secret-value'), secret, ['spiffe://example.org/ops']),
    );
    expect([err.code, err.message]).toEqual(['ERR_UNAUTHENTICATED', 'the admin secret does not match']);
  });
});
