import { formatInteger, formatMiB, formatMs, formatRatio } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import { ratio } from '../common/ratio.js';
import type { Spread } from '../common/stats.js';
import type { CellAggregate, CellFlag, CellResult, MacroResults } from './results.js';
import type { CoreGroup, Scenario } from './scenarios.js';
import type { ServerRole } from './servers.js';

const MARKS: Readonly<Record<CellFlag, string>> = {
  'non-ok': '⚠',
  'load-bound': '⚑',
  contended: '⊘',
  'server-exited': '✖',
  failed: '✖',
};

export const MARKS_LEGEND =
  '⚠ some responses were not OK (see "Non-OK responses"); ⚑ ghz was ≥ 90 % busy: the load generator may have set the pace; ' +
  '⊘ other processes used > 5 % of the benchmark\'s CPUs during the run: the machine was not quiet, figures are disturbed; ' +
  '✖ the cell failed or the server exited (see "Errors"); — not run.';

function percent(fraction: number): string {
  return Number.isFinite(fraction) ? `${Math.round(fraction * 100)}` : 'n/a';
}

/** `median (min-max)`, or the single value for one repetition. */
function formatSpread(s: Spread, format: (n: number) => string): string {
  return s.n > 1 && s.min !== s.max ? `${format(s.median)} (${format(s.min)}-${format(s.max)})` : format(s.median);
}

function marks(cell: CellResult): string {
  const symbols = [...new Set(cell.flags.map((f) => MARKS[f]))].join('');
  return symbols === '' ? '' : ` ${symbols}`;
}

type CellValue = (cell: CellResult, aggregate: CellAggregate) => string;

/** A table with servers as rows and the group's scenarios as columns. */
function figureTable(results: MacroResults, scenarios: readonly Scenario[], value: CellValue, withMarks: boolean): string | null {
  const servers = results.servers.filter((s) => results.cells.some((c) => c.server === s.name && scenarios.some((sc) => sc.id === c.scenario)));
  if (servers.length === 0) return null;
  const rows = servers.map((server) => [
    server.role === 'ours' ? `**${server.name}**` : server.name,
    ...scenarios.map((scenario) => {
      const cell = results.cells.find((c) => c.server === server.name && c.scenario === scenario.id);
      if (cell === undefined) return '—';
      const text = cell.aggregate === null ? '' : value(cell, cell.aggregate);
      return (text + (withMarks ? marks(cell) : '')).trim() || '✖';
    }),
  ]);
  return markdownTable(['server', ...scenarios.map((s) => s.label)], rows);
}

function groupHeading(results: MacroResults, group: CoreGroup, scenarios: readonly Scenario[]): string {
  const split = results.corePlan[group];
  const n = scenarios[0]?.serverCores ?? split.serverCpus.length;
  const where = results.corePlan.pinned
    ? `server on CPU ${split.serverCpus.join(',')}, ghz on CPU ${split.loadCpus.join(',')}`
    : 'NOT pinned: server and ghz share the CPUs';
  return group === 'single' ? `1 server core (${where})` : `N = ${n} server core${n === 1 ? '' : 's'} (${where})`;
}

/** Every macro table for one figure, one table per core group. */
function figureSection(results: MacroResults, title: string, value: CellValue, withMarks: boolean): string {
  const parts = [`### ${title}`];
  for (const group of ['single', 'multi'] as const) {
    const scenarios = results.scenarios.filter((s) => s.group === group);
    const table = figureTable(results, scenarios, value, withMarks);
    if (table !== null) parts.push(`${groupHeading(results, group, scenarios)}\n\n${table}`);
  }
  return parts.join('\n\n');
}

/** The ratios table: ours against Go, the ordinary Node peer and the transport ceiling. */
function ratioSection(results: MacroResults): string {
  const rpsOf = (role: ServerRole, scenarioId: string): number | null => {
    const names = results.servers.filter((s) => s.role === role && s.skipped === null).map((s) => s.name);
    const cell = results.cells.find((c) => c.scenario === scenarioId && names.includes(c.server) && c.aggregate !== null && !c.flags.includes('failed'));
    return cell?.aggregate?.rpsOk.median ?? null;
  };
  const rows = results.scenarios.map((scenario) => {
    const ours = rpsOf('ours', scenario.id);
    // The echo peer is one process: against an N-process cluster it is no ceiling.
    const echoComparable = scenario.group === 'single' || scenario.serverCores === 1;
    return [
      scenario.label,
      formatRatio(ratio(ours, rpsOf('go', scenario.id))),
      formatRatio(ratio(ours, rpsOf('node-peer', scenario.id))),
      echoComparable ? formatRatio(ratio(ours, rpsOf('echo', scenario.id))) : 'n/a (1-process echo)',
    ];
  });
  return [
    '### Ratios of median OK requests/s, this run only',
    'ours = jwt-grpc (1 core) or jwt-grpc-cluster (N cores); Node peer = node-fast-jwt(-cluster); ' +
      '> 1.00x: ours is faster. Ratios across runs or machines are not computed: compare figures of one run.',
    markdownTable(['scenario', 'ours / Go', 'ours / Node peer', 'ours / echo ceiling'], rows),
  ].join('\n\n');
}

function nonOkSection(results: MacroResults): string | null {
  const lines = results.cells
    .filter((c) => (c.aggregate?.nonOkCount ?? 0) > 0)
    .map((c) => {
      const aggregate = c.aggregate as CellAggregate;
      const statuses = Object.entries(aggregate.nonOkByStatus).map(([s, n]) => `${s} ${formatInteger(n)}`).join(', ');
      const firstError = c.repetitions.flatMap((r) => Object.keys(r.ghz.errors))[0];
      return `- ${c.server} ${c.scenario}: ${statuses} of ${formatInteger(aggregate.okCount + aggregate.nonOkCount)}` +
        (firstError === undefined ? '' : ` — e.g. \`${firstError.slice(0, 200)}\``);
    });
  return lines.length === 0 ? null : ['### Non-OK responses', ...lines].join('\n');
}

function errorSection(results: MacroResults): string | null {
  const lines = results.cells.filter((c) => c.error !== null).map((c) => `- ${c.server} ${c.scenario}: ${(c.error ?? '').split('\n')[0]}`);
  const skipped = results.servers.filter((s) => s.skipped !== null).map((s) => `- ${s.name} skipped: ${s.skipped}`);
  return lines.length + skipped.length === 0 ? null : ['### Errors and skipped servers', ...skipped, ...lines].join('\n');
}

/** The whole macro part of summary.md. */
export function macroSummary(results: MacroResults): string {
  const rps = (_: CellResult, a: CellAggregate): string => formatSpread(a.rpsOk, formatInteger);
  const p99 = (_: CellResult, a: CellAggregate): string => formatSpread(a.p99Ms, formatMs);
  const rss = (c: CellResult): string => (c.peakRssBytes === null ? 'n/a' : formatMiB(c.peakRssBytes));
  const cpu = (_: CellResult, a: CellAggregate): string => formatSpread(a.serverCpuUsPerRequest, (n) => n.toFixed(1));
  const busy = (c: CellResult): string => {
    const server = Math.max(...c.repetitions.map((r) => r.serverCpuUtilization));
    const ghz = c.aggregate?.maxLoadCpuUtilization;
    return `${percent(server)} / ${ghz == null ? 'n/a' : percent(ghz)}`;
  };
  const sections = [
    figureSection(results, 'Requests/s, OK responses only: median (min-max) of the repetitions', rps, true),
    MARKS_LEGEND,
    ratioSection(results),
    figureSection(results, 'p99 latency of OK responses, ms: median (min-max)', p99, false),
    figureSection(results, 'Peak RSS, MiB (sum of VmHWM over the server\'s processes, highest repetition, warm-up included)', rss, false),
    figureSection(results, 'Server CPU time per request, µs (user + system, all server processes)', cpu, false),
    figureSection(
      results,
      'CPU busy during the measured runs, server % / ghz % (highest repetition): a server near 100 % set the pace; ' +
        'neither near 100 % means latency-bound or disturbed (see ⊘)',
      busy,
      false,
    ),
    nonOkSection(results),
    errorSection(results),
    'ghz\'s reports per cell and repetition: `ghz/<cell id>/<server>-rep<N>.json` (without the per-call list)' +
      (results.cells.some((c) => c.htmlReport !== null) ? '; its HTML pages: `ghz/<cell id>/<server>.html`.' : '.') +
      ' Every figure of every repetition: `results.json`.',
  ];
  return sections.filter((s): s is string => s !== null).join('\n\n');
}
