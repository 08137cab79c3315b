/**
 * Every export of the public API (every entry point of package.json `exports`) carries
 * TSDoc with an `@example`, so an editor shows each name with a way to use it; so does each
 * entry point's own comment, which says what it is for. That each example compiles is
 * pack.integration.test.ts's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { ENTRY_POINTS } from './entry-points.js';
import { docOf, publicExports } from './examples.js';

const PUBLIC = publicExports();

describe('the public API', () => {
  it('exports names (the check below reads them)', () => {
    expect(PUBLIC.length).toBeGreaterThan(40);
  });

  it.each(PUBLIC)('%s has TSDoc with an @example', (name, file) => {
    const doc = docOf(name, file)?.doc;
    expect(doc, `TSDoc of ${name} (${file})`).toBeDefined();
    expect(doc, `@example in the TSDoc of ${name}`).toContain('@example');
  });

  it.each(ENTRY_POINTS.map((entry) => [entry.specifier, entry.source]))(
    'the entry point %s opens with a comment naming it, with an @example',
    (specifier, source) => {
      const doc = /^\/\*\*[\s\S]*?\*\//.exec(readFileSync(join(PACKAGE_ROOT, source), 'utf8'))?.[0];
      expect(doc, `the comment opening ${source}`).toBeDefined();
      expect(doc).toContain('@example');
      // TypeDoc names the module of docs/api by this tag; without it, by the file's path.
      expect(doc).toContain(`@module ${specifier}\n`);
    },
  );
});
