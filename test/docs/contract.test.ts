/**
 * The lists the docs repeat from the code, checked against the code so they cannot drift:
 * docs/library.md's error codes against the `JwtGrpcErrorCode` union of src/base/errors.ts, its
 * `addJwtService` options against the option table (src/options/table.ts), and docs/cli.md's
 * exit codes against src/cli/exit-codes.ts. (The options of createJwtServer:
 * test/options/docs.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { namesIn } from '../../src/options/resolve.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

const read = (path: string): string => readFileSync(join(PACKAGE_ROOT, path), 'utf8');

/** The text of a page from `start` (a heading or a sentence) to the next heading. */
function sectionOf(page: string, start: string): string {
  const text = read(page);
  const at = text.indexOf(start);
  expect(at, `${page}: ${start}`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n#', at + start.length);
  return text.slice(at, end < 0 ? undefined : end);
}

/** The rows of the first Markdown table in `text`, as trimmed cells, header and separator left out. */
function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The members of the JwtGrpcErrorCode union, read from the source. */
function errorCodesInSource(): string[] {
  const source = read('src/base/errors.ts');
  const union = /export type JwtGrpcErrorCode =([\s\S]*?);/.exec(source)?.[1] ?? '';
  return [...union.replace(/\/\*\*[\s\S]*?\*\//g, '').matchAll(/'(ERR_[A-Z_]+)'/g)].map((match) => match[1] as string);
}

describe('docs/library.md against the code', () => {
  it('lists exactly the error codes of JwtGrpcErrorCode, in its order', () => {
    const codes = errorCodesInSource();
    expect(codes).toContain('ERR_GRPC_JS_VERSION');
    const documented = tableRows(sectionOf('docs/library.md', 'Errors that cross the API')).map(([code = '']) => code.replaceAll('`', ''));
    expect(documented).toEqual(codes);
  });

  it("names exactly addJwtService's options: keys, the table's service group and the revocation store's", () => {
    const text = sectionOf('docs/library.md', '## Options of `addJwtService`');
    const list = /takes only the service's options[\s\S]*?:\n?([\s\S]*?)\. It has no/.exec(text)?.[1] ?? '';
    const documented = [...list.matchAll(/`(\w+)`/g)].map((match) => match[1]);
    const stores = ['revocations', 'revocationStore', 'statusList', 'statusListTtlSeconds', 'statusListBlockSize'];
    expect(documented).toEqual(['keys', ...namesIn('service'), ...stores]);
    expect(stores.filter((name) => !(namesIn('server') as string[]).includes(name))).toEqual([]);
  });
});

describe('docs/cli.md against the code', () => {
  it('lists exactly the exit codes of src/cli/exit-codes.ts', () => {
    const documented = tableRows(sectionOf('docs/cli.md', '## Exit codes')).map(([code = '', serve = '', commands = '']) => ({
      code: Number(code),
      serve,
      commands,
    }));
    expect(documented).toEqual(EXIT_CODES.map(({ code, serve, commands }) => ({ code, serve, commands })));
  });
});
