/**
 * `npm run bench:charts -- <run dir> [--headline FILE]`: the charts and report.html of a
 * run already on disk, from its results.json and summary.md (e.g. a published run, or one
 * from before the charts existed). `--headline FILE` writes only the headline chart
 * there instead: how README.md's docs/img/headline-ratios.svg is made.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError, runProgram } from '../kit/program.js';
import { CHARTS, HEADLINE_CHART, chartSpec } from './charts/index.js';
import type { ChartedResults } from './charts/inputs.js';
import { renderSvg } from './charts/render.js';
import { writeReport } from './write-report.js';

interface ChartsOptions {
  readonly runDir: string;
  readonly headline: string | null;
}

const HELP = `Usage: npm run bench:charts -- <run dir> [--headline FILE]

Writes <name>.svg for every chart the run has data for, and report.html, into <run dir>
(which holds results.json and summary.md).

  --headline FILE   write only the headline chart (${HEADLINE_CHART}) to FILE
  -h, --help        this text
`;

export function parseChartsCommandLine(argv: readonly string[]): { kind: 'help' } | { kind: 'run'; options: ChartsOptions } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { headline: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.values.help === true) return { kind: 'help' };
  if (parsed.positionals.length !== 1) throw new UsageError('expected one run directory (holding results.json)');
  const runDir = resolve(parsed.positionals[0] ?? '');
  if (!existsSync(join(runDir, 'results.json'))) throw new UsageError(`${runDir} has no results.json`);
  return { kind: 'run', options: { runDir, headline: parsed.values.headline ?? null } };
}

async function run(options: ChartsOptions): Promise<number> {
  const results = JSON.parse(readFileSync(join(options.runDir, 'results.json'), 'utf8')) as ChartedResults;
  if (options.headline !== null) {
    const headline = CHARTS.find((c) => c.name === HEADLINE_CHART);
    const spec = headline === undefined ? null : chartSpec(headline, results);
    if (spec === null) {
      process.stderr.write(`bench:charts: ${options.runDir} has no ours / Go ratio to chart\n`);
      return 1;
    }
    writeFileSync(options.headline, await renderSvg(spec));
    process.stderr.write(`bench:charts: wrote ${options.headline}\n`);
    return 0;
  }
  const summaryFile = join(options.runDir, 'summary.md');
  const summary = existsSync(summaryFile) ? readFileSync(summaryFile, 'utf8') : '';
  const { charts, reportFile } = await writeReport(options.runDir, results, summary, (line) => process.stderr.write(line + '\n'));
  process.stderr.write(`bench:charts: wrote ${charts.map((c) => `${c.name}.svg`).join(', ') || 'no chart'} and ${reportFile}\n`);
  return 0;
}

await runProgram({ name: 'bench:charts', url: import.meta.url, help: () => HELP, parse: parseChartsCommandLine, run });
