/**
 * A key file as `jwt-grpc keys` edits it (src/keys/file.ts): read as written, refused by
 * name when it is not a JWK Set, and replaced atomically, mode 0600, never half-written.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type KeyFileEntry, readKeyFileEntries, writeKeyFile } from '../../src/keys/file.js';
import { silentLogger } from '../../src/lib/index.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-key-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(text?: string): string {
  const path = join(dir, `keys-${++n}.json`);
  if (text !== undefined) writeFileSync(path, text, { mode: 0o600 });
  return path;
}

const ENTRIES: KeyFileEntry[] = [
  { kid: 'a', alg: 'HS256', kty: 'oct', k: 'secret-a', comment: 'kept' },
  { kid: 'b', alg: 'ES256', pemFile: 'b.pem' },
];

describe('readKeyFileEntries', () => {
  it('returns the entries as written: unknown members, references and order kept', async () => {
    await expect(readKeyFileEntries(file(JSON.stringify({ keys: ENTRIES })), silentLogger)).resolves.toEqual(ENTRIES);
  });

  it.each([
    ['an array', '[]'],
    ['no keys', '{}'],
    ['keys not an array', '{"keys": {}}'],
    ['an entry that is not an object', '{"keys": [1]}'],
    ['an entry that is an array', '{"keys": [[]]}'],
  ])('refuses %s, naming the file', async (_what, text) => {
    const path = file(text);
    await expect(readKeyFileEntries(path, silentLogger)).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: path,
      message: `key file ${path} must hold a JWK Set: an object with a "keys" array of objects`,
    });
  });

  it('refuses text that is not JSON with a position, and a missing file with its errno', async () => {
    const path = file('{"keys": [\n  {"k": "s3cret"} oops ]}');
    const err = await readKeyFileEntries(path, silentLogger).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'ERR_FILE', message: `key file ${path} is not valid JSON (line 2 column 19)` });
    expect((err as Error).message).not.toContain('s3cret');
    const missing = join(dir, 'missing.json');
    await expect(readKeyFileEntries(missing, silentLogger)).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: `cannot read key file ${missing}: ENOENT`,
    });
  });
});

describe('writeKeyFile', () => {
  it('writes one entry per block, mode 0600, and leaves no temporary file', async () => {
    const path = file();
    await writeKeyFile(path, ENTRIES, { exclusive: true });
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify({ keys: ENTRIES }, null, 2)}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('replaces an existing file, and its mode becomes 0600', async () => {
    const path = file('{"keys": []}');
    chmodSync(path, 0o644);
    await writeKeyFile(path, ENTRIES.slice(0, 1), { exclusive: false });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ keys: ENTRIES.slice(0, 1) });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('refuses, when exclusive, to replace an existing file, and leaves it as it was', async () => {
    const path = file('{"keys": []}');
    await expect(writeKeyFile(path, ENTRIES, { exclusive: true })).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: path,
      message: `cannot create key file ${path}: it exists (--force replaces it)`,
    });
    expect(readFileSync(path, 'utf8')).toBe('{"keys": []}');
  });

  it('names the file when its directory does not exist', async () => {
    const path = join(dir, 'no-such-dir', 'keys.json');
    await expect(writeKeyFile(path, ENTRIES, { exclusive: false })).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: `cannot write key file ${path}: ENOENT`,
    });
  });
});
