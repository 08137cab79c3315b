/**
 * Writes a run's charts (`<name>.svg`) and report.html beside its summary.md. Called by
 * `npm run bench` once results.json and summary.md are on disk, and by
 * `npm run bench:charts` for any past run: a chart that fails is logged and skipped, and
 * nothing here can lose the run's results.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RenderedChart, renderCharts } from './charts/index.js';
import type { ChartedResults } from './charts/inputs.js';
import { renderReportHtml } from './html-report.js';

export interface WrittenReport {
  readonly charts: readonly RenderedChart[];
  readonly reportFile: string;
}

export async function writeReport(
  runDir: string,
  results: ChartedResults,
  summary: string,
  log: (line: string) => void,
): Promise<WrittenReport> {
  const charts = await renderCharts(results, (name, error) => log(`bench: chart ${name} failed, left out: ${error.message}`));
  for (const chart of charts) writeFileSync(join(runDir, `${chart.name}.svg`), chart.svg);
  const reportFile = join(runDir, 'report.html');
  writeFileSync(reportFile, renderReportHtml(results, summary, charts));
  return { charts, reportFile };
}
