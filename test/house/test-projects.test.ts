/**
 * The vitest projects are chosen by file name (vitest.config.ts): `*.integration.test.ts`
 * is `integration`, `*.load.test.ts` is `load`, every other test file `unit`. Each test file
 * lands in exactly one project, read from the config itself, so a pattern that drops a file
 * or runs it twice fails here with the file named. `npm test` runs them in two vitest runs
 * (bench/kit/test-run.ts: `unit` under coverage, then the rest), which together run each
 * project once and report as one.
 */
import { readdirSync } from 'node:fs';
import { dirname, join, matchesGlob, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config, { PROJECT_FILES } from '../../vitest.config.js';
import { TEST_RUNS, argsFor, sumReports } from '../../bench/kit/test-run.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Project {
  readonly name: string;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/** The projects as the config declares them: their names and file patterns. */
function projects(): Project[] {
  const declared = (config.test?.projects ?? []) as { test?: { name?: unknown; include?: string[]; exclude?: string[] } }[];
  return declared.map(({ test }) => ({ name: String(test?.name), include: test?.include ?? [], exclude: test?.exclude ?? [] }));
}

/** The projects `file` (relative to the repository root) belongs to. */
function projectsOf(file: string, all: readonly Project[]): string[] {
  const matches = (patterns: readonly string[]): boolean => patterns.some((pattern) => matchesGlob(file, pattern));
  return all.filter((project) => matches(project.include) && !matches(project.exclude)).map((project) => project.name);
}

/** Every test file under test/, relative to the repository root (fixtures' node_modules excluded). */
function testFiles(): string[] {
  return readdirSync(join(ROOT, 'test'), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts') && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}

describe('vitest projects by file name', () => {
  const all = projects();
  const files = testFiles();

  it('declares the unit, integration and load projects', () => {
    expect(all.map((project) => project.name)).toEqual(['unit', 'integration', 'load']);
    expect(files.length).toBeGreaterThan(100);
  });

  it('puts every test file in exactly one project', () => {
    const wrong = files.map((file) => ({ file, in: projectsOf(file, all) })).filter((entry) => entry.in.length !== 1);
    expect(wrong.map((entry) => `${entry.file}: ${entry.in.length === 0 ? 'no project' : entry.in.join(' and ')}`)).toEqual([]);
  });

  it('chooses the project by the suffix alone', () => {
    for (const file of files) {
      const expected = file.endsWith('.load.test.ts') ? 'load' : file.endsWith('.integration.test.ts') ? 'integration' : 'unit';
      expect(projectsOf(file, all), file).toEqual([expected]);
    }
    // A made-up file of each kind, in a folder that does not exist yet: a new file needs no list.
    expect(projectsOf('test/new-topic/a.test.ts', all)).toEqual(['unit']);
    expect(projectsOf('test/new-topic/deep/a.integration.test.ts', all)).toEqual(['integration']);
    expect(projectsOf('test/new-topic/a.load.test.ts', all)).toEqual(['load']);
    expect(PROJECT_FILES.all).toBe('test/**/*.test.ts');
  });

  it('has no file with a suffix vitest would not run or would misread', () => {
    // `a.integration.ts` or `a.load.ts` (no `.test`) would be run by no project at all;
    // `a.integration.load.test.ts` would be read by its last suffix only.
    const stray = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter(
      (name) =>
        !name.includes('node_modules') &&
        (/\.(integration|load)\.ts$/.test(name) || /\.(integration|load)\.(integration|load)\.test\.ts$/.test(name)),
    );
    expect(stray).toEqual([]);
  });
});

describe('npm test: two vitest runs that report as one', () => {
  it('selects every project exactly once, coverage on unit only', () => {
    const selected = TEST_RUNS.flatMap(({ args }) => args.flatMap((arg, i) => (args[i - 1] === '--project' ? [arg] : [])));
    expect(selected.sort()).toEqual(
      projects()
        .map((project) => project.name)
        .sort(),
    );
    expect(TEST_RUNS.map(({ args }) => (args as readonly string[]).includes('--coverage'))).toEqual([true, false]);
  });

  it('gives each run the arguments, its own part of a JSON report, and sums the parts', () => {
    expect(argsFor(['--reporter=json', '--outputFile=/r/v.json', 'x'], 'unit')).toEqual({
      args: ['--reporter=json', '--outputFile=/r/v.json.unit', 'x'],
      report: '/r/v.json',
    });
    expect(argsFor(['--outputFile', '/r/v.json'], 'rest')).toEqual({ args: ['--outputFile=/r/v.json.rest'], report: '/r/v.json' });
    expect(argsFor(['--bail=1'], 'rest')).toEqual({ args: ['--bail=1'] });
    const unit = { numPassedTests: 3, numFailedTests: 0, numTotalTests: 3, success: true, testResults: ['a'] };
    const rest = { numPassedTests: 2, numFailedTests: 1, numTotalTests: 3, success: false, testResults: ['b'] };
    expect(sumReports([unit, rest])).toMatchObject({
      numPassedTests: 5,
      numFailedTests: 1,
      numTotalTests: 6,
      numPendingTests: 0,
      success: false,
      testResults: ['a', 'b'],
    });
  });
});
