import { formatInteger, formatMiB, formatMs } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import type { Spread } from '../common/stats.js';
import { CONTENDED_SHARE, STOLEN_SHARE } from '../harness/contention.js';
import { PROBE_DISTURBANCE } from '../harness/probe.js';
import { splitFor } from './column.js';
import { disturbanceSection } from './disturbance.js';
import { floorSection } from './floor-section.js';
import { ratioSection } from './ratio-section.js';
import type { CellAggregate, CellFlag, CellResult, MacroResults } from './results.js';
import { type Scenario, tableGroupOf } from './scenarios.js';

const MARKS: Readonly<Record<CellFlag, string>> = {
  'non-ok': '⚠',
  'load-bound': '⚑',
  contended: '⊘',
  stolen: '◐',
  slowed: '∿',
  'server-exited': '✖',
  failed: '✖',
};

const share = (fraction: number): string => `${Math.round(fraction * 100)} %`;

export const MARKS_LEGEND =
  'Marks (in at least one round): ⚠ some responses were not OK (see "Non-OK responses"); ⚑ ghz was ≥ 90 % busy: the load generator may have set the pace; ' +
  `⊘ other processes used > ${share(CONTENDED_SHARE)} of the benchmark's CPUs; ◐ the hypervisor stole > ${share(STOLEN_SHARE)} of their time; ` +
  `∿ the speed probe before or after the measurement was > ${share(PROBE_DISTURBANCE)} off its median over the run (the VM ran faster or slower than usual); ` +
  '✖ the cell failed or the server exited (see "Errors"); — not run.';

function percent(fraction: number): string {
  return Number.isFinite(fraction) ? `${Math.round(fraction * 100)}` : 'n/a';
}

/** `median (min-max)`, or the single value for one round. */
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
  const servers = results.servers.filter((s) =>
    results.cells.some((c) => c.server === s.name && scenarios.some((sc) => sc.id === c.scenario)),
  );
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

/** `1 server core (server on CPU 0, ghz on CPU 1)`, or the same for an N-core group. */
export function groupHeading(results: MacroResults, scenario: Scenario): string {
  const split = splitFor(results.corePlan, scenario);
  const n = scenario.serverCores;
  const where = results.corePlan.pinned
    ? `server on CPU ${split.serverCpus.join(',')}, ghz on CPU ${split.loadCpus.join(',')}`
    : 'NOT pinned: server and ghz share the CPUs';
  if (scenario.group === 'single') return `1 server core (${where})`;
  const workers = scenario.workers === n ? '' : `, ${scenario.workers} workers`;
  return `N = ${n} server core${n === 1 ? '' : 's'}${workers} (${where})`;
}

/** The scenarios split into the tables' groups, in order of first appearance. */
export function scenarioGroups(scenarios: readonly Scenario[]): Scenario[][] {
  const groups = new Map<string, Scenario[]>();
  for (const s of scenarios) groups.set(tableGroupOf(s), [...(groups.get(tableGroupOf(s)) ?? []), s]);
  return [...groups.values()];
}

/** Every macro table for one figure, one table per core group. */
function figureSection(results: MacroResults, title: string, value: CellValue, withMarks: boolean): string {
  const parts = [`### ${title}`];
  for (const scenarios of scenarioGroups(results.scenarios)) {
    const table = figureTable(results, scenarios, value, withMarks);
    if (table !== null) parts.push(`${groupHeading(results, scenarios[0] as Scenario)}\n\n${table}`);
  }
  return parts.join('\n\n');
}

function nonOkSection(results: MacroResults): string | null {
  const lines = results.cells
    .filter((c) => (c.aggregate?.nonOkCount ?? 0) > 0)
    .map((c) => {
      const aggregate = c.aggregate as CellAggregate;
      const statuses = Object.entries(aggregate.nonOkByStatus)
        .map(([s, n]) => `${s} ${formatInteger(n)}`)
        .join(', ');
      const firstError = c.rounds.flatMap((r) => Object.keys(r.ghz.errors))[0];
      return (
        `- ${c.server} ${c.scenario}: ${statuses} of ${formatInteger(aggregate.okCount + aggregate.nonOkCount)}` +
        (firstError === undefined ? '' : ` — e.g. \`${firstError.slice(0, 200)}\``)
      );
    });
  return lines.length === 0 ? null : ['### Non-OK responses', ...lines].join('\n');
}

function errorSection(results: MacroResults): string | null {
  const lines = results.cells.filter((c) => c.error !== null).map((c) => `- ${c.server} ${c.scenario}: ${(c.error ?? '').split('\n')[0]}`);
  const skipped = results.servers.filter((s) => s.skipped !== null).map((s) => `- ${s.name} skipped: ${s.skipped}`);
  return lines.length + skipped.length === 0 ? null : ['### Errors and skipped servers', ...skipped, ...lines].join('\n');
}

/** The whole macro part of summary.md: ratios and verdicts first, then the figures they come from. */
export function macroSummary(results: MacroResults): string {
  const rps = (_: CellResult, a: CellAggregate): string => formatSpread(a.rpsOk, formatInteger);
  const p99 = (_: CellResult, a: CellAggregate): string => formatSpread(a.p99Ms, formatMs);
  const rss = (c: CellResult): string => (c.peakRssBytes === null ? 'n/a' : formatMiB(c.peakRssBytes));
  const cpu = (_: CellResult, a: CellAggregate): string => formatSpread(a.serverCpuUsPerRequest, (n) => n.toFixed(1));
  const busy = (c: CellResult): string => {
    const server = Math.max(...c.rounds.map((r) => r.serverCpuUtilization));
    const ghz = c.aggregate?.maxLoadCpuUtilization;
    return `${percent(server)} / ${ghz == null ? 'n/a' : percent(ghz)}`;
  };
  const sections = [
    ratioSection(results),
    floorSection(results),
    disturbanceSection(results),
    figureSection(results, 'Requests/s, OK responses only: median (min-max) of the rounds', rps, true),
    MARKS_LEGEND,
    figureSection(results, 'Server CPU time per request, µs (user + system, all server processes): median (min-max)', cpu, true),
    figureSection(results, 'p99 latency of OK responses, ms: median (min-max)', p99, false),
    figureSection(results, "Peak RSS, MiB (sum of VmHWM over the server's processes, over warm-up and every round)", rss, false),
    figureSection(
      results,
      'CPU busy during the measured runs, server % / ghz % (highest round): a server near 100 % set the pace; ' +
        'neither near 100 % means latency-bound or disturbed',
      busy,
      false,
    ),
    nonOkSection(results),
    errorSection(results),
    "ghz's reports per cell and round: `ghz/<scenario id>/<server>-round<N>.json` (without the per-call list)" +
      (results.cells.some((c) => c.htmlReport !== null) ? '; its HTML pages (first round): `ghz/<scenario id>/<server>.html`.' : '.') +
      ' Every figure of every round, and every per-round ratio: `results.json`.',
  ];
  return sections.filter((s): s is string => s !== null).join('\n\n');
}
