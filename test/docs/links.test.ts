/**
 * Every relative link of README.md and docs/*.md leads somewhere: to a file or folder of
 * the repository, and where it names an `#anchor`, to a heading of that page (anchors as
 * GitHub makes them from headings).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/package-root.js';
import { markdownPages } from '../package/examples.js';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, ... */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (heading === null) continue;
    const base = (heading[1] as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replaceAll(' ', '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The targets of a page's Markdown links outside code: `[text](target)`. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);
}

const PAGES = markdownPages();

describe('links of README.md and docs/*.md', () => {
  it('reads the pages (the check below needs them)', () => {
    expect(PAGES).toContain('README.md');
    expect(PAGES).toContain(join('docs', 'library.md'));
  });

  it.each(PAGES)('every relative link of %s resolves, file and anchor', (page) => {
    const text = readFileSync(join(PACKAGE_ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const target of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = '', anchor] = target.split('#', 2);
      const file = path === '' ? join(PACKAGE_ROOT, page) : join(PACKAGE_ROOT, dirname(page), decodeURIComponent(path));
      if (!existsSync(file)) {
        broken.push(`${target}: no ${relative(PACKAGE_ROOT, file)}`);
        continue;
      }
      if (anchor !== undefined && !(statSync(file).isFile() && anchorsOf(readFileSync(file, 'utf8')).has(anchor))) {
        broken.push(`${target}: no heading #${anchor} in ${relative(PACKAGE_ROOT, file)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
