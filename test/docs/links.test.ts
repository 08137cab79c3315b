/**
 * Every relative link of README.md and docs/*.md leads somewhere: to a file or folder of
 * the repository, and where it names an `#anchor`, to a heading of that page (anchors as
 * GitHub makes them from headings). The pages the package ships link relatively only to
 * what the package holds (`npm pack`'s own list of files), and to the rest of the
 * repository by its URL, which must name a path the repository has.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
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

/** The files `npm pack` puts in the package, as paths relative to its root (no build needed: scripts are not run). */
function packedFiles(): string[] {
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [pack] = JSON.parse(output) as { files: { path: string }[] }[];
  return (pack?.files ?? []).map((f) => f.path);
}

/** `https://github.com/OWNER/NAME/`, from package.json's repository: how a shipped page links to what the package lacks. */
function repositoryUrl(): string {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };
  return `${manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')}/`;
}

describe("links of the pages the package ships (package.json's files)", () => {
  const files = packedFiles();
  const held = new Set(files);
  const shipped = files.filter((f) => f.endsWith('.md'));
  const repository = repositoryUrl();

  it('reads the package list (the check below needs it)', () => {
    expect(shipped).toContain('README.md');
    expect(shipped).toContain('docs/library.md');
  });

  it.each(shipped)('every link of %s leads to a file the package holds, or to the repository by URL', (page) => {
    const text = readFileSync(join(PACKAGE_ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const target of linksOf(text)) {
      const [path = '', anchor] = target.split('#', 2);
      if (target.startsWith(repository)) {
        // https://github.com/OWNER/NAME/blob/main/PATH or tree/main/PATH: PATH must exist in the repository.
        const inRepository = /^(?:blob|tree)\/main\/(.+?)\/?$/.exec(path.slice(repository.length))?.[1];
        const file = inRepository === undefined ? null : join(PACKAGE_ROOT, decodeURIComponent(inRepository));
        if (file === null || !existsSync(file)) broken.push(`${target}: no such path in the repository`);
        else if (anchor !== undefined && !(statSync(file).isFile() && anchorsOf(readFileSync(file, 'utf8')).has(anchor)))
          broken.push(`${target}: no heading #${anchor}`);
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || path === '') continue;
      const resolved = normalize(join(dirname(page), decodeURIComponent(path))).replace(/\/$/, '');
      const holds = held.has(resolved) || files.some((f) => f.startsWith(`${resolved}/`));
      if (!holds) broken.push(`${target}: the package has no ${resolved} (link it as ${repository}blob/main/${resolved})`);
    }
    expect(broken).toEqual([]);
  });
});
