/**
 * loadSubjects: a subjects file is a non-empty JSON array of non-empty strings; anything else is
 * ERR_FILE naming the file and what is wrong (the JSON error's position, an errno code).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSubjects } from '../../src/jwt-service/load-subjects.js';

const dir = mkdtempSync(join(tmpdir(), 'subjects-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loadSubjects', () => {
  it('reads the array', async () => {
    expect(await loadSubjects(file('ok.json', '["ada", "grace"]'))).toEqual(['ada', 'grace']);
  });

  it.each([
    ['empty', '[]'],
    ['object', '{"a":1}'],
    ['empty-string', '["ada", ""]'],
    ['number', '["ada", 3]'],
  ])('refuses an %s entry or shape', async (name, text) => {
    const path = file(`${name}.json`, text);
    await expect(loadSubjects(path)).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: path,
      message: `subjects file ${path} must hold a non-empty JSON array of non-empty strings`,
    });
  });

  it('refuses text that is not JSON, saying where', async () => {
    const path = file('bad.json', '["ada",\n  oops]');
    await expect(loadSubjects(path)).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: path,
      message: expect.stringMatching(new RegExp(`^cannot read subjects file ${path}: not valid JSON \\(.*line 2.*\\)$`)),
    });
  });

  it('refuses a file it cannot read, with the errno code', async () => {
    const path = join(dir, 'missing.json');
    await expect(loadSubjects(path)).rejects.toMatchObject({
      code: 'ERR_FILE',
      field: path,
      message: `cannot read subjects file ${path}: ENOENT`,
    });
  });
});
