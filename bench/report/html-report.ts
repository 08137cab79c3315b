/**
 * report.html: one self-contained page per run (the charts as inline SVG, the summary's
 * tables as HTML, the machine and versions first), readable offline, with no script.
 */
import type { RenderedChart } from './charts/index.js';
import { escapeHtml, markdownToHtml } from './markdown-html.js';
import type { ChartedResults } from './charts/inputs.js';
import { VERDICT_HEADING, verdictSection } from './short-verdict.js';

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
thead { background: #f3f3f3; }
code { font-size: 12px; background: #f3f3f3; padding: 0 0.2em; }
figure { margin: 1.5em 0; overflow-x: auto; }
figcaption { color: #555; font-size: 13px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: 600; }
`;

function header(results: ChartedResults): string {
  const { machine, versions } = results;
  const packages = Object.entries(versions.packages)
    .map(([name, v]) => `${name} ${v ?? '?'}`)
    .join(', ');
  const rows: [string, string][] = [
    ['run', `${results.startedAt} to ${results.finishedAt}, profile ${results.options.profile}`],
    [
      'machine',
      `${results.options.label === null ? '' : `${results.options.label}: `}${machine.cpuModel}, ${machine.availableCpus} of ${machine.logicalCpus} CPUs${machine.virtualized ? ' (virtual machine)' : ''}, ${machine.memoryGiB} GiB, ${machine.os}, ${machine.kernel}`,
    ],
    ['versions', `Node ${versions.node}, ${versions.go ?? 'no Go'}, ghz ${versions.ghz ?? 'not used'}, ${packages}`],
  ];
  return `<dl>\n${rows.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v)}</dd>`).join('\n')}\n</dl>`;
}

/**
 * summary.md without its title (the page's h1 already) and without its verdict (the page
 * puts the verdict first, computed from results.json, so that a run from before the
 * verdict existed gets one too).
 */
function summaryBody(summary: string): string {
  const withoutTitle = summary.replace(/^# .*\n/, '');
  const start = withoutTitle.indexOf(`${VERDICT_HEADING}\n`);
  if (start === -1) return withoutTitle;
  const next = withoutTitle.indexOf('\n## ', start + VERDICT_HEADING.length);
  return withoutTitle.slice(0, start) + (next === -1 ? '' : withoutTitle.slice(next + 1));
}

/** The page: the verdict, the header, the charts, then summary.md rendered. */
export function renderReportHtml(results: ChartedResults, summary: string, charts: readonly RenderedChart[]): string {
  const figures = charts.map(
    (c) =>
      `<figure id="chart-${c.name}">\n${c.svg}\n<figcaption>${escapeHtml(c.caption)} (<code>${c.name}.svg</code>)</figcaption>\n</figure>`,
  );
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    // No script, no request: the page is a record, read offline.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    `<title>jwt-grpc benchmark, ${escapeHtml(results.startedAt)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>jwt-grpc benchmark, ${escapeHtml(results.startedAt)}</h1>`,
    markdownToHtml(verdictSection(results)),
    header(results),
    charts.length === 0 ? '<p>No chart: this run has no data a chart needs.</p>' : `<h2>Charts</h2>\n${figures.join('\n')}`,
    '<h2>Summary</h2>',
    markdownToHtml(summaryBody(summary)),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
