/**
 * The examples of the documentation, as rustdoc reads a crate's: every ```ts block of
 * README.md and docs/*.md, and every ```ts block of an `@example` in the TSDoc of an entry
 * point (package.json `exports`, ./entry-points.ts) or of one of its exports. Each block is
 * a program of its own, type-checked on its own (pack.integration.test.ts).
 *
 * Conventions, stated in docs/development.md ("Examples are tests"):
 * - a line `// hidden: CODE` is set-up the reader does not need (an import, a value an
 *   earlier block made): the test compiles CODE in its place;
 * - a block opened with ```ts run is also run, and must exit 0; a `console.log(...)` line
 *   there that ends in `// TEXT` says what it prints: TEXT must be a line of its output;
 * - a TSDoc block that imports nothing from jwt-grpc is compiled with every public name
 *   imported, each from its entry point, as if it opened with `import { ... } from 'jwt-grpc'`,
 *   `import { ... } from 'jwt-grpc/client'` and so on (rustdoc likewise puts the crate in
 *   scope of its doctests); a Markdown block is a whole program and imports what it uses,
 *   each name from the entry point that exports it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { ENTRY_POINTS } from './entry-points.js';

export interface Example {
  /** Where it is, e.g. `docs/library.md:12` or `src/keys/merge.ts:15 (mergeKeySets)`. */
  readonly where: string;
  /** A file name for it, unique and readable: `docs-library.md-12`. */
  readonly name: string;
  /** The program the test compiles: hidden lines included, their prefix removed. */
  readonly code: string;
  readonly run: boolean;
}

const HIDDEN = /^(\s*)\/\/ hidden: ?/;

/** The block's program: `// hidden: CODE` lines become CODE. */
export function programOf(block: string): string {
  return block
    .split('\n')
    .map((line) => line.replace(HIDDEN, '$1'))
    .join('\n');
}

/** The block as a reader follows it along the blocks before it: hidden lines dropped. */
export function visibleOf(block: string): string {
  return block
    .split('\n')
    .filter((line) => !HIDDEN.test(line))
    .join('\n');
}

interface Fenced {
  readonly line: number;
  readonly body: string;
  readonly run: boolean;
}

/** The ```ts blocks of Markdown text, with the 1-based line of each opening fence. */
export function tsBlocks(markdown: string): Fenced[] {
  const blocks: Fenced[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)(.*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const [, indent = '', language = '', info = ''] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end] as string).startsWith(`${indent}\`\`\``)) end++;
    if (language === 'ts' || language === 'typescript') {
      const body = lines
        .slice(i + 1, end)
        .map((line) => line.slice(indent.length))
        .join('\n');
      blocks.push({ line: i + 1, body, run: info.trim().split(/\s+/).includes('run') });
    }
    i = end;
  }
  return blocks;
}

/** `console.log(...); // TEXT`: the comment is the line it prints. */
const PRINTS = /\bconsole\.log\(.*\);\s*\/\/ (.+)$/;

/**
 * What a block says it prints, in order: the TEXT of each `console.log(...); // TEXT` line.
 * A run block's output must hold each of them as a line (pack.integration.test.ts), so a
 * printed result the documentation promises cannot drift from what the code prints.
 */
export function printedLines(code: string): string[] {
  return code.split('\n').flatMap((line) => PRINTS.exec(line)?.[1]?.trimEnd() ?? []);
}

/** The Markdown pages whose examples are tests: README.md and docs/*.md (docs/api/ is generated from the TSDoc). */
export function markdownPages(): string[] {
  const docs = join(PACKAGE_ROOT, 'docs');
  const pages = readdirSync(docs)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...pages.sort()];
}

export function markdownExamples(): Example[] {
  return markdownPages().flatMap((page) =>
    tsBlocks(readFileSync(join(PACKAGE_ROOT, page), 'utf8')).map((block) => ({
      where: `${page}:${block.line}`,
      name: `${page.replaceAll('/', '-')}-${block.line}`,
      code: programOf(block.body),
      run: block.run,
    })),
  );
}

/** `export { a, type B } from './x.js'` and `export type { C } from './y.js'`: name -> module file. */
export function reExports(file: string): Map<string, string> {
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

export interface ExportDoc {
  readonly name: string;
  readonly file: string;
  /** The TSDoc text, `/** ... *\/` included. */
  readonly doc: string;
  /** 1-based line of the TSDoc's first line in `file`. */
  readonly line: number;
}

/** The TSDoc right before `name`'s declaration, following re-exports; undefined when it has none. */
export function docOf(name: string, file: string): ExportDoc | undefined {
  const source = readFileSync(file, 'utf8');
  const declaration = new RegExp(
    `(/\\*\\*(?:(?!\\*/)[\\s\\S])*\\*/)\\s*export (?:declare )?(?:async )?(?:function|class|const|interface|type) ${name}\\b`,
  );
  const match = declaration.exec(source);
  if (match !== null) {
    return { name, file, doc: match[1] as string, line: source.slice(0, match.index).split('\n').length };
  }
  const next = reExports(file).get(name);
  return next === undefined ? undefined : docOf(name, next);
}

/** An export of the public API: its name, the module file that declares or re-exports it, and the entry point a program imports it from. */
export type PublicExport = [name: string, file: string, specifier: string];

/** Every export of every entry point, in the order of package.json's `exports`. */
export function publicExports(): PublicExport[] {
  return ENTRY_POINTS.flatMap((entry) =>
    [...reExports(join(PACKAGE_ROOT, entry.source))].map(([name, file]): PublicExport => [name, file, entry.specifier]),
  );
}

/** An import of jwt-grpc or of one of its entry points. */
const IMPORTS_JWT_GRPC = /from 'jwt-grpc(\/[\w-]+)?'/;

/** A TSDoc comment's ```ts blocks, as examples found at `where` (1-based line of the comment in `file`). */
function commentExamples(doc: string, file: string, line: number, label: string): Example[] {
  // The comment's text: each line without its leading ` * `.
  const text = doc
    .split('\n')
    .map((entry) => entry.replace(/^\s*\/?\*+\/?\s?/, ''))
    .join('\n');
  const path = relative(PACKAGE_ROOT, file);
  return tsBlocks(text).map((block) => {
    const program = programOf(block.body);
    return {
      where: `${path}:${line + block.line - 1} (${label})`,
      name: `${path.replaceAll('/', '-')}-${label.replaceAll('/', '-')}-${block.line}`,
      code: IMPORTS_JWT_GRPC.test(program) ? program : `${implicitImport()}\n${program}`,
      run: block.run,
    };
  });
}

/** The ```ts blocks of every export's TSDoc, and of each entry point's own comment (its first). */
export function tsdocExamples(): Example[] {
  const ofExports = publicExports().flatMap(([name, file]) => {
    const found = docOf(name, file);
    return found === undefined ? [] : commentExamples(found.doc, found.file, found.line, name);
  });
  const ofEntryPoints = ENTRY_POINTS.flatMap((entry) => {
    const file = join(PACKAGE_ROOT, entry.source);
    const doc = /^\/\*\*[\s\S]*?\*\//.exec(readFileSync(file, 'utf8'))?.[0];
    return doc === undefined ? [] : commentExamples(doc, file, 1, entry.specifier);
  });
  return [...ofEntryPoints, ...ofExports];
}

/** What a TSDoc example that imports nothing from jwt-grpc has in scope: every public name, each from its entry point. */
export function implicitImport(): string {
  // A result type is exported beside each function that gives it: imported once, from the first entry point that has it.
  const seen = new Set<string>();
  return ENTRY_POINTS.map((entry) => {
    const names = publicExports()
      .filter(([name, , specifier]) => specifier === entry.specifier && !seen.has(name) && seen.add(name))
      .map(([name]) => name);
    return `import { ${names.join(', ')} } from '${entry.specifier}';`;
  }).join('\n');
}
