/**
 * The charts and report.html, rendered in Node from a results.json fixture: each chart
 * draws its marks, a section a run lacks gives no chart, a chart that fails costs only
 * itself, and report.html holds the charts and the summary's tables with no script.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHARTS, renderCharts } from '../../bench/report/charts/index.js';
import { readingOf } from '../../bench/report/charts/interval-dots.js';
import { ceilingRatioRows, oursGoRatioRows, oursRustRatioRows, verdictRatioRows } from '../../bench/report/charts/ratio-charts.js';
import { markdownToHtml } from '../../bench/report/markdown-html.js';
import { renderSummary } from '../../bench/report/summary.js';
import { writeReport } from '../../bench/report/write-report.js';
import { spansOne } from '../../bench/common/median-interval.js';
import { EXPECTED_MARKS, macroOnlyFixture, reportFixture } from './report-fixture.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** How many elements each `mark-<type> role-mark` group of an SVG holds, by type. */
function marksIn(svg: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of svg.matchAll(/<g class="mark-(\w+) role-mark[^"]*"[^>]*>([\s\S]*?)<\/g>/g)) {
    const elements = (match[2] ?? '').match(/<(path|line|text|rect)\b/g)?.length ?? 0;
    counts.set(match[1] ?? '', (counts.get(match[1] ?? '') ?? 0) + elements);
  }
  return counts;
}

describe('charts', () => {
  it('renders every chart of a run that has every section, each with its marks', async () => {
    const errors: string[] = [];
    const charts = await renderCharts(reportFixture(), (name, error) => errors.push(`${name}: ${error.message}`));
    expect(errors).toEqual([]);
    expect(charts.map((c) => c.name)).toEqual(CHARTS.map((c) => c.name));
    for (const chart of charts) {
      expect(chart.svg.startsWith('<svg'), chart.name).toBe(true);
      const marks = marksIn(chart.svg);
      for (const type of EXPECTED_MARKS[chart.name] ?? ['?'])
        expect(marks.get(type) ?? 0, `${chart.name}: ${type} marks`).toBeGreaterThan(0);
    }
  });

  it('draws one row per ours / Go ratio and labels each with its median', async () => {
    const results = reportFixture();
    const rows = oursGoRatioRows(results);
    // Every ours / Go ratio with an interval, plus h2load's two algorithms in two metrics each.
    expect(rows).toHaveLength((results.macro?.ratios.filter((r) => r.comparison === 'ours-go' && r.interval !== null).length ?? 0) + 4);
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const [chart] = await renderCharts(results, () => undefined);
    for (const row of rows) expect(chart?.svg, row.row).toContain(`${row.median.toFixed(2)}x`);
  });

  it('draws ours / Rust, one row per ratio, where the run has the Rust peer, and no chart where it has not', async () => {
    const rust = reportFixture();
    const macro = rust.macro;
    if (macro === null) throw new Error('fixture without macro');
    const rows = oursRustRatioRows(rust);
    expect(rows).toHaveLength(macro.ratios.filter((r) => r.comparison === 'ours-rust' && r.interval !== null).length);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    const charts = await renderCharts(rust, () => undefined);
    const chart = charts.find((c) => c.name === 'ratios-ours-rust');
    for (const row of rows) expect(chart?.svg, row.row).toContain(`${row.median.toFixed(2)}x`);
    const without = { ...rust, macro: { ...macro, ratios: macro.ratios.filter((r) => r.comparison !== 'ours-rust') } };
    expect(oursRustRatioRows(without)).toEqual([]);
    expect((await renderCharts(without, () => undefined)).map((c) => c.name)).not.toContain('ratios-ours-rust');
  });

  it('carries the machine, the date and the load notation under every title', async () => {
    const charts = await renderCharts(reportFixture(), () => undefined);
    expect(charts.length).toBe(CHARTS.length);
    for (const chart of charts) {
      expect(chart.svg, chart.name).toContain('AMD EPYC, 2 of 2 CPUs, virtual machine');
      expect(chart.svg, chart.name).toContain('run of 2026-11-23 18:34 UTC');
      expect(chart.svg, chart.name).toContain('Load: 1c = server on 1 core');
      expect(chart.svg, chart.name).toContain('1x50 = 1 connection × 50 calls in flight');
    }
  });

  it('keeps each server against its own echo apart from the ratios between servers', async () => {
    const results = reportFixture();
    const between = verdictRatioRows(results);
    const ceilings = ceilingRatioRows(results);
    expect(between.length).toBeGreaterThan(0);
    expect(between.filter((r) => r.row.includes('its echo'))).toEqual([]);
    // The fixture's Go / its echo rows, in both scenarios: below 1.00, and in their own chart only.
    expect(ceilings.map((r) => r.row)).toEqual([
      'HS256 1c 1x50 · Go / its echo · calls/CPU-s',
      'ES256 1c 5x250 · Go / its echo · calls/CPU-s',
    ]);
    const charts = await renderCharts(results, () => undefined);
    expect(charts.find((c) => c.name === 'ratios')?.svg).not.toContain('its echo');
    expect(charts.find((c) => c.name === 'ratios-ceilings')?.svg).toContain('Go / its echo');
  });

  it('reads each interval as the verdicts do: across 1.00 is no difference shown', () => {
    for (const row of verdictRatioRows(reportFixture())) {
      const spans = spansOne({ median: row.median, low: row.low, high: row.high, n: 5 });
      expect(row.reading === 'no difference shown' || row.reading === 'no interval', row.row).toBe(spans);
    }
    expect(readingOf(0.97, 1.08)).toBe('no difference shown');
    expect(readingOf(1.01, 1.2)).toBe('subject better');
    expect(readingOf(0.5, 0.99)).toBe('baseline better');
    expect(readingOf(null, null)).toBe('no interval');
  });

  it('skips the charts whose sections a run lacks, or whose entries lack their figures', async () => {
    const bare = await renderCharts(macroOnlyFixture(), () => undefined);
    expect(bare.map((c) => c.name)).toEqual(['ratios-ours-go', 'ratios-ours-rust', 'ratios', 'ratios-ceilings', 'scaling', 'cpu-per-call']);
    const broken = {
      ...macroOnlyFixture(),
      openLoop: [{ server: 'go', algorithm: 'HS256' }],
      warmup: [null, { warmupCalls: 'ten' }],
      startup: 'none',
    };
    const charts = await renderCharts(broken as never, () => undefined);
    expect(charts.map((c) => c.name)).toEqual([
      'ratios-ours-go',
      'ratios-ours-rust',
      'ratios',
      'ratios-ceilings',
      'scaling',
      'cpu-per-call',
    ]);
    // One N only (the 2-core machine's N = 1): no scaling curve.
    const macro = bare.length > 0 ? macroOnlyFixture().macro : null;
    if (macro === null) throw new Error('fixture without macro');
    const oneN = {
      ...macroOnlyFixture(),
      macro: { ...macro, scenarios: macro.scenarios.filter((s) => s.group === 'single' || s.serverCores === 2) },
    };
    expect((await renderCharts(oneN, () => undefined)).map((c) => c.name)).not.toContain('scaling');
  });

  it('loses only the chart that fails, and says which', async () => {
    const results = reportFixture();
    const macro = results.macro;
    if (macro === null) throw new Error('fixture without macro');
    // A cell with a round that is null: the CPU chart cannot be built, the others can.
    const broken = { ...results, macro: { ...macro, cells: [...macro.cells, { ...macro.cells[0], rounds: [null] }] } };
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-charts-'));
    dirs.push(dir);
    const log: string[] = [];
    const { charts } = await writeReport(dir, broken as never, renderSummary(results), (line) => log.push(line));
    expect(charts.map((c) => c.name)).not.toContain('cpu-per-call');
    expect(charts).toHaveLength(CHARTS.length - 1);
    expect(log).toEqual([expect.stringMatching(/^bench: chart cpu-per-call failed, left out: /)]);
    expect(readdirSync(dir).sort()).toEqual([...charts.map((c) => `${c.name}.svg`), 'report.html'].sort());
  });
});

describe('report.html', () => {
  it('holds the header, every chart inline and the summary tables, with no script and no remote resource', async () => {
    const results = reportFixture();
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-report-'));
    dirs.push(dir);
    const { charts, reportFile } = await writeReport(dir, results, renderSummary(results), () => undefined);
    const html = readFileSync(reportFile, 'utf8');
    expect(html).toContain(results.versions.node);
    expect(html).toContain(results.machine.cpuModel);
    for (const chart of charts) expect(html).toContain(chart.svg);
    expect(html).toMatch(/<table>[\s\S]*<th style="text-align:left">scenario<\/th>[\s\S]*ours \/ Go/);
    expect(html).not.toMatch(/<script|<link|<img|src="http|@import/i);
  });

  it('renders summary Markdown: tables with their alignment, lists, bold and code, and escapes the rest', () => {
    const html = markdownToHtml(
      [
        '## Ratios',
        '',
        '| a | b |',
        '| :--- | ---: |',
        '| **x** | `1 < 2` |',
        '',
        '- one',
        '- <script>two</script>',
        '',
        '[ok](summary.md) [bad](javascript:alert(1))',
      ].join('\n'),
    );
    expect(html).toContain('<h2>Ratios</h2>');
    expect(html).toContain('<td style="text-align:left"><strong>x</strong></td><td style="text-align:right"><code>1 &lt; 2</code></td>');
    expect(html).toContain('<li>&lt;script&gt;two&lt;/script&gt;</li>');
    expect(html).toContain('<a href="summary.md">ok</a>');
    expect(html).not.toContain('href="javascript');
  });
});
