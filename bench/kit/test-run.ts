/**
 * `npm test` after the build and the tools: vitest in two runs, `unit` under the coverage gate
 * (vitest.config.ts says why coverage gates `unit` alone: vitest collects coverage for a whole
 * run, never for one project of it), then `integration` and `load`. The second run goes on when
 * the first fails, so that one run reports everything; the exit status is the first failure's.
 * Every argument goes to both runs, and the JSON reports each writes to an `--outputFile` are
 * summed into that file, as one vitest run would have written it (.ci/run counts the tests in it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type ParsedCommandLine, runProgram } from './program.js';
import { repoPath } from './paths.js';

const HELP = `Usage: npm test [-- VITEST_ARGUMENTS]   (or: node dist/bench/kit/test-run.js ...)

Runs vitest twice: the unit project with --coverage (the gate of vitest.config.ts), then the
integration and load projects, each with the arguments given. A --outputFile=PATH of the json
reporter gets both runs' results, summed.

Exit status: 0 both runs passed, else the first run's failing status.
`;

/** The two runs: the projects each selects, and the name its part of a JSON report takes. */
export const TEST_RUNS = [
  { part: 'unit', args: ['--project', 'unit', '--coverage'] },
  { part: 'rest', args: ['--project', 'integration', '--project', 'load'] },
] as const;

/** The counters of vitest's JSON report that add up across runs. */
const COUNTS = [
  'numTotalTestSuites',
  'numPassedTestSuites',
  'numFailedTestSuites',
  'numPendingTestSuites',
  'numTotalTests',
  'numPassedTests',
  'numFailedTests',
  'numPendingTests',
  'numTodoTests',
] as const;

type JsonReport = Record<string, unknown> & { success?: boolean; testResults?: unknown[] };

/** `args` for one run: a `--outputFile=PATH` (or `--outputFile PATH`) becomes PATH.PART. */
export function argsFor(args: readonly string[], part: string): { args: string[]; report?: string } {
  const out: string[] = [];
  let report: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const inline = /^--outputFile=(.+)$/.exec(arg);
    if (inline !== null || (arg === '--outputFile' && i + 1 < args.length)) {
      const path = inline?.[1] ?? (args[++i] as string);
      report = path;
      out.push(`--outputFile=${path}.${part}`);
    } else out.push(arg);
  }
  return report === undefined ? { args: out } : { args: out, report };
}

/** The JSON reports of the runs, summed into one: counters added, results joined, success only if every run's. */
export function sumReports(reports: readonly JsonReport[]): JsonReport {
  const sum: JsonReport = { ...reports[0], testResults: [] };
  for (const name of COUNTS) sum[name] = reports.reduce((total, report) => total + (Number(report[name]) || 0), 0);
  sum.testResults = reports.flatMap((report) => report.testResults ?? []);
  sum.success = reports.every((report) => report.success === true);
  return sum;
}

function run(args: readonly string[]): number {
  const vitest = repoPath('node_modules', 'vitest', 'vitest.mjs');
  const result = spawnSync(process.execPath, [vitest, 'run', ...args], { stdio: 'inherit' });
  return result.status ?? 1;
}

/** Writes the summed report to `path` from the parts the runs wrote, and removes the parts. */
function joinReports(path: string): void {
  const parts = TEST_RUNS.map(({ part }) => `${path}.${part}`).filter((part) => existsSync(part));
  writeFileSync(path, JSON.stringify(sumReports(parts.map((part) => JSON.parse(readFileSync(part, 'utf8')) as JsonReport))));
  for (const part of parts) rmSync(part);
}

function parse(argv: readonly string[]): ParsedCommandLine<{ args: readonly string[] }> {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  return { kind: 'run', options: { args: argv } };
}

await runProgram({
  name: 'test-run',
  url: import.meta.url,
  help: () => HELP,
  parse,
  run: async ({ args }) => {
    const statuses: number[] = [];
    let report: string | undefined;
    for (const { part, args: selection } of TEST_RUNS) {
      const given = argsFor(args, part);
      report = given.report;
      statuses.push(run([...selection, ...given.args]));
    }
    if (report !== undefined) joinReports(report);
    return statuses.find((status) => status !== 0) ?? 0;
  },
});
