/**
 * The fixed-load chart (bench/report/charts/fixed-load-chart.ts): ours / Go CPU per call
 * against the offered share of Go's capacity, one line per algorithm with interval bars.
 */
import { describe, expect, it } from 'vitest';
import { fixedLoadChartRows, fixedLoadChartSpec } from '../../../../bench/report/charts/fixed-load-chart.js';
import { CHARTS } from '../../../../bench/report/charts/index.js';
import { renderSvg } from '../../../../bench/report/charts/render.js';
import { macroOnlyFixture, reportFixture } from '../../report-fixture.js';

describe('the fixed-load chart', () => {
  it("has one row per ratio with a CPU figure, at its percentage of Go's capacity, with its interval", () => {
    const rows = fixedLoadChartRows(reportFixture());
    expect(rows).toHaveLength(6);
    expect(rows.find((r) => r.algorithm === 'HS256' && r.percentOfGo === 25)).toEqual({
      algorithm: 'HS256',
      percentOfGo: 25,
      offeredRps: 2500,
      median: 0.625,
      low: 0.625 * 0.95,
      high: 0.625 * 1.05,
    });
  });

  it('leaves out ratios without a CPU figure (runs before it was measured) and draws a point where no interval could be given', () => {
    const results = {
      ...macroOnlyFixture(),
      openLoopRatios: [
        { algorithm: 'HS256', fractionOfGoCapacity: 0.5, offeredRps: 5, p99Ratio: null },
        { algorithm: 'ES256', fractionOfGoCapacity: 0.5, offeredRps: 5, cpuPerCallRatio: { median: 0.9, low: null, high: null, n: 3 } },
      ],
    };
    expect(fixedLoadChartRows(results)).toEqual([{ algorithm: 'ES256', percentOfGo: 50, offeredRps: 5, median: 0.9, low: 0.9, high: 0.9 }]);
    expect(fixedLoadChartRows(macroOnlyFixture())).toEqual([]);
    expect(CHARTS.find((c) => c.name === 'cpu-fixed-load')?.spec(macroOnlyFixture())).toBeNull();
  });

  it('renders a line per algorithm, interval bars and the line at 1.00 on a log axis', async () => {
    const spec = fixedLoadChartSpec(fixedLoadChartRows(reportFixture()));
    const svg = await renderSvg(spec);
    expect(svg.startsWith('<svg')).toBe(true);
    // Two algorithms' lines, three bars each plus the 1.00 rule.
    expect(svg.match(/<g class="mark-line role-mark[^"]*"/g)).toHaveLength(2);
    expect(svg).toMatch(/mark-rule role-mark/);
    expect(svg).toContain('HS256');
    expect(svg).toContain('ES256');
    expect(JSON.stringify(spec)).toContain('"type":"log"');
  });
});
