/**
 * The API reference in docs/api/ is what TypeDoc makes of the TSDoc today: regenerated into
 * a temporary folder (`npm run docs` with another --out) and compared file by file, so a
 * change of the public API or of its TSDoc that was not followed by `npm run docs` fails.
 * It has a module per entry point of package.json `exports`, and every {@link} of the
 * TSDoc resolves (one entry point's comment may link another's names:
 * docs/tools/entry-point-links.mjs).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit } from '../../bench/kit/launcher.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { ENTRY_POINTS } from './entry-points.js';

const TOOLS = join(PACKAGE_ROOT, 'docs', 'tools');
const COMMITTED = join(PACKAGE_ROOT, 'docs', 'api');

/** Every file under `dir`, by its path relative to `dir`, with its text. */
function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), readFileSync(path, 'utf8'));
  }
  return files;
}

let out: string;
/** What TypeDoc printed: its warnings (an unresolved link among them) and errors. */
let log: string;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'jwt-grpc-api-'));
  const typedoc = join(TOOLS, 'node_modules', 'typedoc', 'bin', 'typedoc');
  const run = await runToExit(process.execPath, [typedoc, '--options', 'typedoc.json', '--out', out], { cwd: TOOLS, timeoutMs: 120_000 });
  if (run.code !== 0) throw new Error(`typedoc failed (exit ${run.code ?? run.signal}):\n${run.stdout}${run.stderr}`);
  log = run.stdout + run.stderr;
}, 120_000);

afterAll(() => {
  if (out !== undefined) rmSync(out, { recursive: true, force: true });
});

describe('docs/api, the API reference', () => {
  it('is what `npm run docs` makes of the sources now', () => {
    const generated = tree(out);
    const committed = tree(COMMITTED);
    expect(generated.size, 'files TypeDoc wrote').toBeGreaterThan(40);
    expect([...committed.keys()].sort(), 'files of docs/api: run `npm run docs`').toEqual([...generated.keys()].sort());
    for (const [path, text] of generated) {
      expect(committed.get(path), `docs/api/${path} differs from the sources: run \`npm run docs\``).toBe(text);
    }
  });

  it('has a module per entry point, named as a program imports it', () => {
    const generated = tree(out);
    for (const entry of ENTRY_POINTS) {
      expect(generated.has(join(entry.specifier, 'README.md')), entry.specifier).toBe(true);
      expect(generated.get('README.md')).toContain(`- [${entry.specifier}](${entry.specifier}/README.md)\n`);
    }
  });

  it('resolves every link of the TSDoc, across entry points too', () => {
    expect(log).toContain('markdown generated');
    expect(log).not.toMatch(/warning|error/i);
  });
});
