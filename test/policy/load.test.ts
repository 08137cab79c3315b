/** Loading a policy file (src/policy/load.ts): unreadable, not JSON or ill-formed, each refused naming the file. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/policy/load.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loadPolicy', () => {
  it('reads and checks a policy', async () => {
    await expect(loadPolicy(file('ok.json', '{"callers": {"dns:a": {"subjects": ["a"]}}}'))).resolves.toEqual({
      callers: { 'dns:a': { subjects: ['a'] } },
    });
  });

  it('refuses a missing file, text that is not JSON, and a bad field, each naming the file', async () => {
    const missing = join(dir, 'missing.json');
    await expect(loadPolicy(missing)).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'policy',
      message: `policy file ${missing}: cannot read it: ENOENT`,
    });
    const broken = file('broken.json', '{"callers": ');
    await expect(loadPolicy(broken)).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      message: expect.stringMatching(new RegExp(`^policy file ${broken}: \\$: not valid JSON \\(`)),
    });
    const bad = file('bad.json', '{"callers": {"a": {"subjects": []}}}');
    await expect(loadPolicy(bad)).rejects.toMatchObject({
      message: `policy file ${bad}: $.callers.a.subjects: must hold at least 1 entry`,
    });
  });
});
