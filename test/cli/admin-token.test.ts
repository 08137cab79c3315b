/** The admin secret file (src/cli/admin-token.ts): one line, no whitespace, one trailing newline allowed; refusals name the flag and the file only. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readAdminSecretText } from '../../src/cli/admin-token.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-admin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { warn() {} };

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

describe('readAdminSecretText', () => {
  it('reads the secret without its line ending', async () => {
    await expect(readAdminSecretText(file('lf', 's3cret\n'), quiet)).resolves.toBe('s3cret');
    await expect(readAdminSecretText(file('crlf', 's3cret\r\n'), quiet)).resolves.toBe('s3cret');
    await expect(readAdminSecretText(file('bare', 's3cret'), quiet)).resolves.toBe('s3cret');
  });

  it.each([
    ['empty', ''],
    ['only a newline', '\n'],
    ['two lines', 's3cret\nmore\n'],
    ['a space', 's3 cret'],
    ['two newlines', 's3cret\n\n'],
  ])('refuses a file with %s, naming it but not its content', async (_what, text) => {
    const path = file(`bad-${_what.replace(/ /g, '-')}`, text);
    const err = await readAdminSecretText(path, quiet).catch((e: Error) => e);
    expect(err).toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'admin-token-file',
      message: `--admin-token-file: ${path} must hold the secret on one line, without whitespace`,
    });
    expect((err as Error).message).not.toContain('s3');
  });

  it('refuses a file it cannot read as ERR_FILE with the errno', async () => {
    const missing = join(dir, 'missing');
    await expect(readAdminSecretText(missing, quiet)).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: `--admin-token-file: cannot read ${missing}: ENOENT`,
    });
  });
});
