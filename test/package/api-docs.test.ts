/**
 * Every export of the public API (src/lib.ts) carries TSDoc with an `@example`, so an
 * editor shows each name with a way to use it. That each example compiles is pack.integration.test.ts's.
 */
import { describe, expect, it } from 'vitest';
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
});
