/**
 * Secret files (src/base/secret-file.ts): a warning, once per logger and naming the path only,
 * when group, others or another user could read or replace the file.
 */
import type { Buffer } from 'node:buffer';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSecretFile, secretFileProblem } from '../src/base/secret-file.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-secret-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function warnings(): { warn: (message: string) => void; lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (message) => void lines.push(message) };
}

describe('secretFileProblem', () => {
  it.each([
    [0o100600, 1000, undefined],
    [0o100400, 0, undefined],
    [0o100644, 1000, 'is readable by group or others (mode 644): chmod 600 it'],
    [0o100604, 1000, 'is readable by group or others (mode 604): chmod 600 it'],
    [0o100620, 1000, 'is writable by group or others (mode 620): chmod 600 it'],
    [0o100600, 1001, "is owned by uid 1001, not by this process's user (uid 1000) or root: chown it"],
    [
      0o100640,
      1001,
      "is readable by group or others (mode 640): chmod 600 it; it is owned by uid 1001, not by this process's user (uid 1000) or root: chown it",
    ],
  ])('mode %o, owner %i: %s', (mode, owner, expected) => {
    expect(secretFileProblem({ mode, uid: owner }, 1000)).toBe(expected);
  });

  it('checks no owner where the platform has no uids', () => {
    expect(secretFileProblem({ mode: 0o100600, uid: 1234 }, undefined)).toBeUndefined();
  });
});

describe.skipIf(process.platform === 'win32')('readSecretFile', () => {
  it('reads the content and warns once per logger about a file open to others, naming the path only', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'hunter2-secret');
    chmodSync(path, 0o644);
    const logger = warnings();
    expect((await readSecretFile(path, 'admin token file', logger)).toString()).toBe('hunter2-secret');
    await readSecretFile(path, 'admin token file', logger);
    expect(logger.lines).toEqual([`admin token file ${path} is readable by group or others (mode 644): chmod 600 it`]);
    const other = warnings();
    await readSecretFile(path, 'admin token file', other);
    expect(other.lines).toHaveLength(1);
  });

  it('does not warn about a private file, or about content that holds no secret', async () => {
    const private_ = join(dir, 'private');
    writeFileSync(private_, 'x', { mode: 0o600 });
    const open = join(dir, 'public.pem');
    writeFileSync(open, 'PUBLIC');
    chmodSync(open, 0o644);
    const logger = warnings();
    await readSecretFile(private_, 'key file', logger);
    await readSecretFile(open, 'PEM file', logger, (content) => !content.toString().startsWith('PUBLIC'));
    expect(logger.lines).toEqual([]);
  });

  it('refuses, rather than warns about, a file open to others whose content names code to load', async () => {
    const path = join(dir, 'names-code.json');
    writeFileSync(path, 'RUNS');
    chmodSync(path, 0o640);
    const logger = warnings();
    const runsCode = (content: Buffer): boolean => content.toString() === 'RUNS';
    await expect(readSecretFile(path, 'key file', logger, () => true, runsCode)).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: `key file ${path} is readable by group or others (mode 640): chmod 600 it; refused, as it names code this process would load (a PKCS#11 module)`,
    });
    expect(logger.lines).toEqual([]);
    chmodSync(path, 0o600);
    expect((await readSecretFile(path, 'key file', logger, () => true, runsCode)).toString()).toBe('RUNS');
    // Content that names no code, open to others: a warning, as before.
    writeFileSync(path, 'DATA');
    chmodSync(path, 0o640);
    expect((await readSecretFile(path, 'key file', logger, () => true, runsCode)).toString()).toBe('DATA');
    expect(logger.lines).toHaveLength(1);
  });

  it('lets a read error through as the file system reports it', async () => {
    await expect(readSecretFile(join(dir, 'missing'), 'key file', warnings())).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
