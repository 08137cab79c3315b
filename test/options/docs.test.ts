/**
 * The option table (src/options/table.ts) against what documents it: the options tables
 * of docs/library.md and docs/cluster.md and the synopsis of docs/cli.md, the TSDoc of the public options interfaces, and the
 * table's own consistency (defaults valid, flags and environment variables unique).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultText, namesIn, resolveOptions } from '../../src/options/resolve.js';
import { OPTIONS, type OptionGroup, type OptionName, type OptionRow } from '../../src/options/table.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

const page = (name: string): string => readFileSync(join(PACKAGE_ROOT, 'docs', name), 'utf8');
const NAMES = Object.keys(OPTIONS) as OptionName[];
const row = (name: OptionName): OptionRow => OPTIONS[name];

interface DocumentedOption {
  readonly default: string;
  readonly range: string;
}

/** The first Markdown table after `heading` in docs/`file`: option name -> default and range (backticks dropped). */
function documentedTable(file: string, heading: string): Map<string, DocumentedOption> {
  const text = page(file);
  const at = text.indexOf(heading);
  expect(at, `docs/${file} heading ${heading}`).toBeGreaterThanOrEqual(0);
  const lines = text.slice(at).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const table = new Map<string, DocumentedOption>();
  // Header and separator rows first; a blank line ends the table.
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    const [names = '', documented = '', range = ''] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    for (const [, name] of names.matchAll(/`(\w+)`/g)) {
      table.set(name as string, { default: documented.replaceAll('`', ''), range });
    }
  }
  return table;
}

function expectTableMatches(file: string, heading: string, groups: readonly OptionGroup[]): void {
  const documented = documentedTable(file, heading);
  const expected = NAMES.filter((name) => groups.includes(row(name).group));
  expect([...documented.keys()].sort(), `options listed under ${heading}`).toEqual([...expected].sort());
  for (const name of expected) {
    expect(documented.get(name), `${name} in docs/${file}`).toEqual({ default: defaultText(name), range: row(name).kind.range });
  }
}

describe('the documentation', () => {
  it("lists exactly the options of createJwtServer, with the table's defaults and ranges", () => {
    expectTableMatches('library.md', '## Options of `createJwtServer`', ['keys', 'service', 'transport', 'server']);
  });

  it("lists exactly the value options of runCluster, with the table's defaults and ranges", () => {
    expectTableMatches('cluster.md', '# Cluster mode', ['cluster']);
  });

  it('shows every flag of the command line in its synopsis, and no other', () => {
    const cli = page('cli.md');
    const synopsis = cli.slice(cli.indexOf('```text'), cli.indexOf('```', cli.indexOf('```text') + 3));
    const flags = NAMES.flatMap((name) => (row(name).cli?.flag === undefined ? [] : [`--${row(name).cli?.flag}`]));
    const shown = [...synopsis.matchAll(/--[a-z0-9-]+/g)].map(([flag]) => flag).filter((flag) => flag !== '--help' && flag !== '--version');
    expect([...new Set(shown)].sort()).toEqual([...flags].sort());
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The TSDoc of each member of `interfaceName` in `file`, by member name. */
function memberDocs(file: string, interfaceName: string): Map<string, string> {
  const source = readFileSync(join(PACKAGE_ROOT, file), 'utf8');
  const start = source.indexOf(`export interface ${interfaceName} `);
  expect(start, `${interfaceName} in ${file}`).toBeGreaterThanOrEqual(0);
  const body = source.slice(start, source.indexOf('\n}', start));
  const docs = new Map<string, string>();
  for (const [, doc = '', name = ''] of body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly (\w+)\??:/g)) {
    docs.set(name, doc.replace(/\s*\*\s*/g, ' ').replaceAll('`', ''));
  }
  return docs;
}

describe('the TSDoc of the public options interfaces', () => {
  it.each([
    ['src/jwt-service/options.ts', 'JwtServiceOptions', 'service'],
    ['src/server/options.ts', 'TransportOptions', 'transport'],
    ['src/server/options.ts', 'JwtServerOptions', 'server'],
    ['src/cluster/options.ts', 'ClusterOptions', 'cluster'],
  ] as const)("%s %s states the table's default of each option", (file, interfaceName, group) => {
    const docs = memberDocs(file, interfaceName);
    for (const name of namesIn(group)) {
      expect(docs.get(name), `${interfaceName}.${name} has TSDoc`).toBeDefined();
      expect(docs.get(name), `${interfaceName}.${name}`).toMatch(new RegExp(`Default:? ${escapeRegExp(defaultText(name))}`));
    }
  });

  it('VerifierOptions states the defaults of the service options it shares', () => {
    const docs = memberDocs('src/tokens/verify.ts', 'VerifierOptions');
    for (const [member, name] of [
      ['clockToleranceSeconds', 'clockToleranceSeconds'],
      ['maxTokenLength', 'maxTokenLength'],
      ['cache', 'verifyCache'],
    ] as const) {
      expect(docs.get(member), `VerifierOptions.${member}`).toContain(`Default ${defaultText(name)}`);
    }
  });
});

describe('the table itself', () => {
  it('every default is a valid value of its option', () => {
    for (const group of ['keys', 'service', 'transport', 'server', 'cluster', 'cli'] as const) {
      expect(() => resolveOptions(group, {})).not.toThrow();
    }
  });

  it('gives each flag and environment variable to one option, and a text reader to each that the command line sets', () => {
    const flags = NAMES.flatMap((name) => (row(name).cli?.flag === undefined ? [] : [row(name).cli?.flag]));
    const envs = NAMES.flatMap((name) => (row(name).cli === undefined ? [] : [row(name).cli?.env]));
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(envs).size).toBe(envs.length);
    for (const name of NAMES) {
      const cli = row(name).cli;
      if (cli !== undefined && cli.file !== true) expect(row(name).kind.parse, `${name} reads command-line text`).toBeDefined();
    }
  });
});
