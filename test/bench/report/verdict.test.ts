/**
 * The verdict in five lines (bench/report/short-verdict.ts), from the report fixture: the
 * machine, date and noise; ours against Go, Rust and the Node peer per scenario; the run
 * against README.md's published range with the likely reason when outside; first in
 * summary.md and in report.html.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MacroResults, RatioResult } from '../../../bench/macro/results.js';
import type { BenchResults } from '../../../bench/report/results-file.js';
import { PUBLISHED_RANGES, VERDICT_HEADING, plainVerdict, verdictLines } from '../../../bench/report/short-verdict.js';
import { renderSummary } from '../../../bench/report/summary.js';
import { writeReport } from '../../../bench/report/write-report.js';
import { PACKAGE_ROOT } from '../../../src/base/package-root.js';
import { reportFixture } from '../report-fixture.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function macroOf(results: BenchResults): MacroResults {
  if (results.macro === null) throw new Error('fixture without macro');
  return results.macro;
}

/** The fixture with the HS256 1c 1x50 ratios of one comparison and metric moved to `median` (interval ±5 %). */
function withRatio(results: BenchResults, comparison: string, median: number): BenchResults {
  const macro = macroOf(results);
  const ratios = macro.ratios.map(
    (r): RatioResult =>
      r.scenario === 'single-hs256-1x50' && r.comparison === comparison && r.metric === 'callsPerCpuSecond'
        ? { ...r, interval: { median, low: median * 0.95, high: median * 1.05, n: 10 } }
        : r,
  );
  return { ...results, macro: { ...macro, ratios } };
}

/** The fixture with every measurement flagged as disturbed by other processes (⊘). */
function busy(results: BenchResults): BenchResults {
  const macro = macroOf(results);
  const cells = macro.cells.map((c) => ({ ...c, rounds: c.rounds.map((r) => ({ ...r, flags: [...r.flags, 'contended' as const] })) }));
  return { ...results, macro: { ...macro, cells } };
}

describe('the verdict in five lines', () => {
  it('names the date, the machine and the noise, then ours / Go, Rust and Node peer per scenario, in the verdicts’ metric', () => {
    const lines = verdictLines(reportFixture());
    expect(lines).toHaveLength(5);
    const [run, go, rust, node] = lines;
    expect(run).toContain('2026-11-23 18:34 UTC');
    expect(run).toContain('AMD EPYC, 2 of 2 CPUs, virtual machine');
    expect(run).toMatch(/the machine was quiet \(8 of 130 measurements disturbed, steal 0\.0 %\)/);
    // HS256 1x50: ghz set the pace, so CPU per call; ES256 5x250: both saturated, so requests/s.
    expect(go).toContain('HS256 1c 1x50 1.99x per CPU-s (1.92-2.18)');
    expect(go).toContain('ES256 1c 5x250 1.39x requests/s (1.37-1.41)');
    expect(rust).toContain('**ours / Rust**');
    expect(rust).toContain('HS256 1c 1x50 1.99x per CPU-s');
    expect(node).toBe('**ours / Node peer**: not in this run.');
  });

  it('says "level" where the interval includes 1.00, never a point value that reads as a winner', () => {
    const [, go] = verdictLines(withRatio(reportFixture(), 'ours-go', 1.02));
    expect(go).toContain('HS256 1c 1x50 level per CPU-s (0.97-1.07)');
  });

  it('says a run inside README.md’s range is inside it', () => {
    const inside = withRatio(withRatio(reportFixture(), 'ours-go', 2.4), 'ours-rust', 1.8);
    const readme = verdictLines(inside)[4];
    expect(readme).toContain('ours / Go 2.40x, inside 2.32x-2.52x');
    expect(readme).toContain('ours / Rust 1.80x, inside 1.69x-1.97x');
    expect(readme).not.toContain('Likely');
    expect(readme).toMatch(/1\.97x\.$/);
  });

  it('gives the latency-bound cell as the reason on a quiet run of the published machine', () => {
    // The fixture's jwt-grpc ran the HS256 1x50 cell 60 % busy: ghz set the pace.
    const readme = verdictLines(reportFixture())[4];
    expect(readme).toContain(
      'ours / Go 1.99x, outside 2.32x-2.52x; ours / Rust 1.99x, outside 1.69x-1.97x. Likely: a latency-bound cell (ours 60 % busy, ghz set the pace)',
    );
    expect(readme).not.toContain('busy machine');
    expect(readme).not.toContain('another machine');
  });

  it('says when the run shows no cause for a figure outside the range', () => {
    const fixture = reportFixture();
    const macro = macroOf(fixture);
    // jwt-grpc saturated in that cell: not latency-bound, on the published machine, quiet.
    const cells = macro.cells.map((c) =>
      c.aggregate === null || c.server !== 'jwt-grpc' || c.scenario !== 'single-hs256-1x50'
        ? c
        : { ...c, aggregate: { ...c.aggregate, serverCpuUtilization: { ...c.aggregate.serverCpuUtilization, median: 0.97 } } },
    );
    const readme = verdictLines({ ...fixture, macro: { ...macro, cells } })[4];
    expect(readme).toMatch(/outside 1\.69x-1\.97x\. No cause in this run's data: run again, or with more rounds \(--rounds 16\)\.$/);
  });

  it('names a busy machine and another machine where the run shows them', () => {
    const fixture = busy(withRatio(reportFixture(), 'ours-go', 2.72));
    const elsewhere = {
      ...fixture,
      machine: { ...fixture.machine, cpuModel: 'Intel(R) Xeon(R) Platinum', availableCpus: 8, logicalCpus: 8 },
    };
    const [run, , , , readme] = verdictLines(elsewhere);
    expect(run).toContain('the machine was busy (130 of 130 measurements disturbed');
    expect(readme).toContain('ours / Go 2.72x, outside 2.32x-2.52x');
    expect(readme).toContain('Likely: another machine than the published runs');
    expect(readme).toContain('a busy machine');
    const smoke = { ...fixture, options: { ...fixture.options, profile: 'smoke' as const } };
    expect(verdictLines(smoke)[4]).toContain('the smoke profile');
  });

  it('says when a run has nothing to set beside the published range', () => {
    const macro = macroOf(reportFixture());
    const without = { ...reportFixture(), macro: { ...macro, ratios: macro.ratios.filter((r) => r.scenario !== 'single-hs256-1x50') } };
    expect(verdictLines(without)[4]).toMatch(/not comparable, this run has no HS256 1c 1x50/);
  });

  it('still has its five lines for a run without the ghz section (micro only, or the load sections alone)', () => {
    const lines = verdictLines({ ...reportFixture(), macro: null });
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/; noise not measured \(no ghz section\)\.$/);
    expect(lines.slice(1, 4)).toEqual([
      '**ours / Go**: not in this run.',
      '**ours / Rust**: not in this run.',
      '**ours / Node peer**: not in this run.',
    ]);
    expect(lines[4]).toMatch(/not comparable/);
  });

  it('is the first section of summary.md, with the load notation spelled out', () => {
    const summary = renderSummary(reportFixture());
    const [title, verdict] = summary.split('\n\n');
    expect(title).toMatch(/^# jwt-grpc benchmark, /);
    expect(verdict).toBe(VERDICT_HEADING);
    expect(summary.indexOf(VERDICT_HEADING)).toBeLessThan(summary.indexOf('## The run'));
    expect(summary.indexOf(VERDICT_HEADING)).toBeLessThan(summary.indexOf('### Ratios'));
    expect(summary).toContain(
      'Load: 1c = server on 1 core; 2w/1c = 2 worker processes on 1 core; N=2 = 2 server cores, 2 worker processes',
    );
    expect(summary).toContain('1x50 = 1 connection × 50 calls in flight (ghz, closed loop)');
    expect(plainVerdict(reportFixture())).not.toContain('**');
  });

  it('opens report.html, once, before the charts', async () => {
    const results = reportFixture();
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-verdict-'));
    dirs.push(dir);
    const { reportFile } = await writeReport(dir, results, renderSummary(results), () => undefined);
    const html = readFileSync(reportFile, 'utf8');
    expect(html.match(/Verdict in five lines/g)).toHaveLength(1);
    expect(html.indexOf('Verdict in five lines')).toBeLessThan(html.indexOf('<h2>Charts</h2>'));
    expect(html).toContain('<strong>ours / Go</strong>');
  });

  it('gives report.html a verdict for a run whose summary.md predates it', async () => {
    const results = reportFixture();
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-verdict-old-'));
    dirs.push(dir);
    const old = renderSummary(results).replace(/## Verdict in five lines[\s\S]*?\n## /, '## ');
    const { reportFile } = await writeReport(dir, results, old, () => undefined);
    expect(readFileSync(reportFile, 'utf8').match(/Verdict in five lines/g)).toHaveLength(1);
  });

  it('is, in docs/benchmarks.md, what the published run of 2026-11-28 01:25 gives today', () => {
    const run = join(PACKAGE_ROOT, 'bench', 'results', 'published', '2026-11-28T01-25-floor-quiet-2', 'results.json');
    const published = JSON.parse(readFileSync(run, 'utf8')) as BenchResults;
    const page = readFileSync(join(PACKAGE_ROOT, 'docs', 'benchmarks.md'), 'utf8');
    const quoted = /## Your run beside the published one[\s\S]*?```text\n([\s\S]*?)\n```/.exec(page)?.[1];
    expect(quoted).toBe(plainVerdict(published));
    expect(quoted).toContain('inside 2.32x-2.52x');
  });

  it('keeps README.md quoting the published ranges the verdict checks against', () => {
    const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
    for (const range of PUBLISHED_RANGES) expect(readme).toContain(`${range.low.toFixed(2)}x-${range.high.toFixed(2)}x`);
  });
});
