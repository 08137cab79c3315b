/**
 * Every export of the public API (src/lib.ts) carries TSDoc with an `@example`, so an
 * editor shows each name with a way to use it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/package-root.js';

const SRC = join(PACKAGE_ROOT, 'src');

/** `export { a, type B } from './x.js'` and `export type { C } from './y.js'`: name -> module file. */
function reExports(file: string): Map<string, string> {
  const source = readFileSync(file, 'utf8');
  const names = new Map<string, string>();
  for (const [, list = '', from = ''] of source.matchAll(/export (?:type )?\{([^}]*)\} from '([^']+)';/g)) {
    for (const entry of list.split(',')) {
      const name = entry.trim().replace(/^type /, '');
      if (name !== '') names.set(name, resolve(dirname(file), from.replace(/\.js$/, '.ts')));
    }
  }
  return names;
}

/** The TSDoc right before `name`'s declaration, following re-exports; undefined when it has none. */
function docOf(name: string, file: string): string | undefined {
  const source = readFileSync(file, 'utf8');
  const declaration = new RegExp(`(/\\*\\*(?:(?!\\*/)[\\s\\S])*\\*/)\\s*export (?:declare )?(?:async )?(?:function|class|const|interface|type) ${name}\\b`);
  const match = declaration.exec(source);
  if (match !== null) return match[1];
  const next = reExports(file).get(name);
  return next === undefined ? undefined : docOf(name, next);
}

const PUBLIC = [...reExports(join(SRC, 'lib.ts'))];

describe('the public API', () => {
  it('exports names (the check below reads them)', () => {
    expect(PUBLIC.length).toBeGreaterThan(40);
  });

  it.each(PUBLIC)('%s has TSDoc with an @example', (name, file) => {
    const doc = docOf(name, file);
    expect(doc, `TSDoc of ${name} (${file})`).toBeDefined();
    expect(doc, `@example in the TSDoc of ${name}`).toContain('@example');
  });
});
