/**
 * A results.json for the report's tests: the 2026-11-23T18:34 run trimmed to two
 * scenarios, four servers and five rounds, with made-up h2load, openLoop, warmup and
 * startup sections in the shapes those sections have (test/bench/fixtures/report-results.json).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChartedResults } from '../../bench/report/charts/inputs.js';
import { PACKAGE_ROOT } from '../../src/package-root.js';

export function reportFixture(): ChartedResults {
  return JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'bench', 'fixtures', 'report-results.json'), 'utf8')) as ChartedResults;
}

/** The fixture without the sections other parts of the benchmark add: a run of the harness alone. */
export function macroOnlyFixture(): ChartedResults {
  const { h2load: _h, openLoop: _o, warmup: _w, startup: _s, ...rest } = reportFixture();
  return rest;
}

/** Per chart, the vega mark types (`mark-<type> role-mark`) its SVG must draw at least one of each. */
export const EXPECTED_MARKS: Readonly<Record<string, readonly string[]>> = {
  'ratios-ours-go': ['symbol', 'rule', 'text'],
  ratios: ['symbol', 'rule', 'text'],
  h2load: ['symbol', 'rule', 'text'],
  latency: ['line', 'area', 'symbol'],
  'cpu-per-call': ['rect'],
  warmup: ['line', 'area', 'symbol'],
  startup: ['symbol', 'rule', 'text'],
};
