/**
 * A results.json for the report's tests: the 2026-11-23T18:34 run trimmed to two
 * scenarios, four servers and five rounds, with made-up h2load, openLoop, warmup and
 * startup sections in the shapes those sections have (test/bench/fixtures/report-results.json).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MacroResults, RatioResult, ServerStatus } from '../../bench/macro/results.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import type { BenchResults } from '../../bench/report/results-file.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { cell } from './round-fixture.js';

/**
 * The fixture, its 1-core ours / Go ratios copied as ours / Rust, plus "N cores" groups at N = 1 (2 workers), 2 and 4 for HS256 with made-up
 * rounds of the cluster and Go, and their ours / Go ratios: what the scaling chart reads.
 */
export function reportFixture(): BenchResults {
  const results = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'bench', 'fixtures', 'report-results.json'), 'utf8')) as BenchResults;
  const macro = results.macro as MacroResults;
  const multi = buildScenarios(
    ['HS256'],
    [
      { cores: 1, workers: 2 },
      { cores: 2, workers: 2 },
      { cores: 4, workers: 4 },
    ],
  ).filter((s) => s.group === 'multi');
  const cluster: ServerStatus = {
    ...(macro.servers.find((s) => s.name === 'jwt-grpc') as ServerStatus),
    name: 'jwt-grpc-cluster',
    label: 'jwt-grpc-cluster',
    cluster: true,
    usesAllCores: true,
  };
  const rounds = (rps: number) => [0.97, 1.0, 1.02, 0.99, 1.03].map((f) => ({ rps: rps * f }));
  const cells = multi.flatMap((s) => [
    cell('jwt-grpc-cluster', s.id, rounds(30_000 * s.serverCores)),
    cell('go', s.id, rounds(22_000 * s.serverCores ** 0.9)),
  ]);
  const ratios: RatioResult[] = multi.map((s) => {
    const median = 30_000 / 22_000 / s.serverCores ** -0.1;
    return {
      scenario: s.id,
      comparison: 'ours-go',
      subject: 'jwt-grpc-cluster',
      baseline: 'go',
      metric: 'rps',
      perRound: [],
      interval: { median, low: median * 0.95, high: median * 1.05, n: 5 },
      headline: true,
    };
  });
  // The 1-core ours / Go ratios again as ours / Rust (the rust row came after the run the fixture is from).
  const rust: RatioResult[] = macro.ratios
    .filter((r) => r.comparison === 'ours-go')
    .map((r) => ({ ...r, comparison: 'ours-rust', baseline: 'rust' }));
  // The start-up section (it came after the run the fixture is from): a reference row, Go and ours.
  const ms = (median: number) => ({ median, low: median * 0.95, high: median * 1.05, n: 11 });
  const startupRows = [
    { id: 'bare-node-listener', what: 'bare Node TCP listener: exec to the port accepting', ms: ms(45), ratio: null, ratioTo: null },
    { id: 'go', what: 'Go peer: exec to the first OK GenerateJwt', ms: ms(20), ratio: ms(0.45), ratioTo: 'bare-node-listener' },
    {
      id: 'keys-file',
      what: 'jwt-grpc serve --keys FILE: exec to the first OK GenerateJwt',
      ms: ms(210),
      ratio: ms(4.6),
      ratioTo: 'bare-node-listener',
    },
  ] as const;
  // CPU per call at fixed load (it came after the run the fixture is from): ours / Go at 25, 50 and 80 % of Go's capacity.
  const openLoopRatios = [0.25, 0.5, 0.8].flatMap((f) =>
    (['HS256', 'ES256'] as const).map((algorithm) => ({
      algorithm,
      fractionOfGoCapacity: f,
      offeredRps: 10_000 * f,
      p99Ratio: null,
      cpuPerCallRatio: ms(algorithm === 'HS256' ? 0.6 + f / 10 : 0.95),
    })),
  );
  return {
    ...results,
    openLoopRatios,
    startupRows,
    macro: {
      ...macro,
      // As a 16-core machine would split its CPUs (the summary's tables name them).
      corePlan: {
        ...macro.corePlan,
        multi: [1, 2, 4].map((n) => ({
          cores: n,
          workers: Math.max(2, n),
          serverCpus: [...Array(n).keys()],
          loadCpus: [...Array(16 - n).keys()].map((i) => i + n),
        })),
      },
      scenarios: [...macro.scenarios, ...multi],
      servers: [...macro.servers, cluster],
      cells: [...macro.cells, ...cells],
      ratios: [...macro.ratios, ...rust, ...ratios],
    },
  };
}

/** The fixture without the sections other parts of the benchmark add: a run of the harness alone. */
export function macroOnlyFixture(): BenchResults {
  return { ...reportFixture(), h2load: null, openLoop: null, openLoopRatios: null, warmup: null, startup: null, startupRows: null };
}

/** Per chart, the vega mark types (`mark-<type> role-mark`) its SVG must draw at least one of each. */
export const EXPECTED_MARKS: Readonly<Record<string, readonly string[]>> = {
  'ratios-ours-go': ['symbol', 'rule', 'text'],
  'ratios-ours-rust': ['symbol', 'rule', 'text'],
  ratios: ['symbol', 'rule', 'text'],
  'ratios-ceilings': ['symbol', 'rule', 'text'],
  h2load: ['symbol', 'rule', 'text'],
  'cpu-fixed-load': ['line', 'rule', 'symbol'],
  latency: ['line', 'area', 'symbol'],
  scaling: ['line', 'area', 'symbol', 'rule'],
  'cpu-per-call': ['rect'],
  warmup: ['line', 'area', 'symbol'],
  startup: ['symbol', 'rule', 'text'],
  'startup-section': ['symbol', 'rule', 'text'],
};
