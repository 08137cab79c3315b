/**
 * CPU per call at fixed offered load (bench/load/fixed-load.ts): the rates offered, CPU per
 * call from the server's CPU time and the OK count, the ratio ours / Go taken round by
 * round with its interval, and the summary's rows.
 */
import { describe, expect, it } from 'vitest';
import { bootstrapMedian, seedFor } from '../../../bench/common/median-interval.js';
import {
  FIXED_LOAD_FRACTIONS,
  type ServerCpuRun,
  cpuPerCallFigure,
  cpuPerCallRatio,
  cpuPerCallUs,
  fixedLoadRows,
  fractionRates,
  serverBusy,
} from '../../../bench/load/fixed-load.js';
import { FRACTIONS_OF_GO, ratePoints } from '../../../bench/load/open-loop.js';
import type { LoadResults, OpenLoopPoint } from '../../../bench/load/results.js';
import { fixedLoadPart, loadSummary } from '../../../bench/load/summary.js';

/** Five rounds of one server at one rate: CPU seconds over 2 s windows and the OK counts. */
const runs = (cpuS: readonly number[], ok = 10_000): ServerCpuRun[] =>
  cpuS.map((serverCpuS, i) => ({ round: i + 1, serverCpuS, wallS: 2, ok }));

describe('the rates', () => {
  it("are 25, 50 and 80 % of Go's saturated rate, offered to both servers", () => {
    expect(FIXED_LOAD_FRACTIONS).toEqual([0.25, 0.5, 0.8]);
    expect(fractionRates(52_573)).toEqual([
      { fraction: 0.25, offeredRps: 13_143 },
      { fraction: 0.5, offeredRps: 26_287 },
      { fraction: 0.8, offeredRps: 42_058 },
    ]);
    expect(fractionRates(0)).toEqual([]);
    expect(fractionRates(Number.NaN)).toEqual([]);
  });

  it("are the open-loop section's fraction-of-Go points, and --fixed-load runs those alone", () => {
    expect(FRACTIONS_OF_GO).toEqual(FIXED_LOAD_FRACTIONS);
    const capacity = (s: string) => (s === 'go' ? 1000 : 800);
    const alone = ratePoints(['jwt-grpc', 'go'], capacity, [], []);
    expect(alone.map((p) => `${p.server} ${p.offeredRps} ${p.fractionOfGoCapacity}`)).toEqual([
      'jwt-grpc 250 0.25',
      'jwt-grpc 500 0.5',
      'jwt-grpc 800 0.8',
      'go 250 0.25',
      'go 500 0.5',
      'go 800 0.8',
    ]);
    expect(alone.map((p) => p.offeredRps)).toEqual([...fractionRates(1000), ...fractionRates(1000)].map((r) => r.offeredRps));
  });
});

describe('CPU per call', () => {
  it("is the server's CPU time over the run / its OK calls, in µs; none without an OK call", () => {
    expect(cpuPerCallUs(0.25, 10_000)).toBeCloseTo(25, 10);
    expect(cpuPerCallUs(0.25, 0)).toBeNaN();
    expect(cpuPerCallUs(-1, 10)).toBeNaN();
  });

  it('is the median over rounds with its bootstrap interval, rounds without an OK call left out', () => {
    const figure = cpuPerCallFigure([...runs([0.2, 0.22, 0.18, 0.25, 0.21]), { round: 6, serverCpuS: 0.1, wallS: 2, ok: 0 }], 'k');
    expect(figure).toEqual(bootstrapMedian([20, 22, 18, 25, 21], seedFor('k')));
    expect(figure?.median).toBeCloseTo(21, 10);
    expect(figure?.low).toBeCloseTo(18, 10);
    expect(figure?.high).toBeCloseTo(25, 10);
    expect(cpuPerCallFigure([], 'k')).toBeNull();
  });

  it("gives the server's busy share of its core", () => {
    expect(serverBusy(runs([0.5, 1, 1.5]))).toBeCloseTo(0.5, 10);
    expect(serverBusy([])).toBeNull();
  });
});

describe('ours / Go', () => {
  it('pairs the two servers by round, not by position, and leaves out a round either lacks', () => {
    const ours = runs([0.1, 0.12, 0.11, 0.1, 0.13]);
    // Go's rounds listed out of order, round 5 missing, round 4 with no OK call.
    const go = [3, 1, 2]
      .map((round) => ({ round, serverCpuS: 0.2 * round, wallS: 2, ok: 10_000 }))
      .concat({ round: 4, serverCpuS: 0.2, wallS: 2, ok: 0 });
    const ratio = cpuPerCallRatio(ours, go, 'r');
    expect(ratio).toMatchObject({ n: 3, low: null, high: null });
    expect(ratio?.median).toBeCloseTo(0.12 / 0.4, 10);
  });

  it('is a median with its 95 % interval from five paired rounds; < 1 where ours spends less', () => {
    const ours = runs([0.1, 0.12, 0.11, 0.1, 0.13]);
    const go = runs([0.2, 0.2, 0.22, 0.18, 0.2]);
    const expected = [0.5, 0.6, 0.5, 0.1 / 0.18, 0.65];
    const ratio = cpuPerCallRatio(ours, go, 'fixed-load/HS256/0.5/cpu');
    expect(ratio).toEqual(
      bootstrapMedian(
        expected.map((_, i) => cpuPerCallUs(ours[i]?.serverCpuS ?? 0, 10_000) / cpuPerCallUs(go[i]?.serverCpuS ?? 0, 10_000)),
        seedFor('fixed-load/HS256/0.5/cpu'),
      ),
    );
    expect(ratio?.median).toBeCloseTo(0.1 / 0.18, 10);
    expect(ratio?.low).toBeCloseTo(0.5, 10);
    expect(ratio?.high).toBeCloseTo(0.65, 10);
    expect(cpuPerCallRatio(ours, [], 'r')).toBeNull();
  });
});

describe("the summary's rows", () => {
  const interval = (median: number, low: number | null = median * 0.9, high: number | null = median * 1.1) => ({
    median,
    low,
    high,
    n: low === null ? 3 : 5,
  });
  const point = (server: string, algorithm: string, f: number, us: number, extra: Partial<OpenLoopPoint> = {}): OpenLoopPoint => ({
    server,
    algorithm,
    offeredRps: 10_000 * f,
    fractionOfGoCapacity: f,
    p50Ms: null,
    p99Ms: null,
    p999Ms: null,
    achievedRps: 10_000 * f,
    errors: 0,
    rounds: 5,
    generatorCpu: 0.2,
    maxSendLagMs: 0.1,
    cpuPerCallUs: interval(us),
    serverCpu: (10_000 * f * us) / 1e6,
    disturbedRounds: 0,
    ...extra,
  });
  const results: LoadResults = {
    h2load: null,
    openLoop: [
      point('jwt-grpc', 'HS256', 0.5, 12),
      point('go', 'HS256', 0.5, 20, { disturbedRounds: 1 }),
      point('jwt-grpc', 'HS256', 0.25, 14),
      point('go', 'HS256', 0.25, 21),
      point('jwt-grpc', 'ES256', 0.8, 80, { achievedRps: 6000 }),
      point('go', 'ES256', 0.8, 90),
      // A point of the latency sweep only: no CPU ratio, no row.
      { ...point('jwt-grpc', 'HS256', 0.9, 10), fractionOfGoCapacity: undefined as never, fractionOfOwnCapacity: 0.9 },
    ],
    openLoopRatios: [
      { algorithm: 'HS256', fractionOfGoCapacity: 0.5, offeredRps: 5000, p99Ratio: null, cpuPerCallRatio: interval(0.6, 0.55, 0.66) },
      { algorithm: 'ES256', fractionOfGoCapacity: 0.8, offeredRps: 8000, p99Ratio: null, cpuPerCallRatio: interval(0.9, 0.85, 1.02) },
      { algorithm: 'HS256', fractionOfGoCapacity: 0.25, offeredRps: 2500, p99Ratio: null, cpuPerCallRatio: interval(0.66, null, null) },
      // Written before CPU was measured: no row.
      { algorithm: 'HS256', fractionOfGoCapacity: 0.8, offeredRps: 8000, p99Ratio: null },
    ],
    warmup: null,
    startup: null,
    startupRows: null,
    startupSettings: null,
    loadSettings: {
      servers: ['jwt-grpc', 'go'],
      algorithms: ['HS256', 'ES256'],
      openLoop: {
        durationS: 2,
        rounds: 5,
        connections: 4,
        arrivals: 'poisson',
        fractionsOfOwn: [],
        fractionsOfGo: [0.25, 0.5, 0.8],
        absoluteRps: [],
        capacities: [],
      },
      warmup: null,
      notes: [],
    },
  };

  it("join each ratio with both servers' figures, by algorithm then load", () => {
    const rows = fixedLoadRows(results.openLoop ?? [], results.openLoopRatios ?? []);
    expect(rows.map((r) => `${r.algorithm} ${r.fractionOfGoCapacity}`)).toEqual(['ES256 0.8', 'HS256 0.25', 'HS256 0.5']);
    expect(rows[2]).toMatchObject({
      offeredRps: 5000,
      ours: { cpuPerCallUs: { median: 12 }, serverCpu: 0.06 },
      go: { cpuPerCallUs: { median: 20 } },
      ratio: { median: 0.6 },
      disturbedRounds: 1,
    });
    expect(fixedLoadRows([], results.openLoopRatios ?? [])[0]).toMatchObject({ ours: null, go: null });
  });

  it('print µs per call with its interval, busy %, the ratio, and mark a server that fell behind or a disturbed round', () => {
    const text = fixedLoadPart(results).join('\n\n');
    expect(text).toContain('### CPU per call at fixed offered load');
    expect(text).toContain('5 interleaved rounds of 2 s per rate');
    expect(text).toContain('| HS256 | 50 % (5,000/s) | 12.0 (10.8-13.2) | 6 | 20.0 (18.0-22.0) | 10 | 0.60x (0.55-0.66) ⊘ |');
    expect(text).toContain('| HS256 | 25 % (2,500/s) | 14.0 (12.6-15.4) | 4 | 21.0 (18.9-23.1) | 5 | 0.66x (3 rounds: no interval) |');
    expect(text).toContain(
      '| ES256 | 80 % (8,000/s) | 80.0 (72.0-88.0) (achieved 6,000/s) | 64 | 90.0 (81.0-99.0) | 72 | no difference shown (0.85-1.02) |',
    );
    expect(loadSummary(results).join('\n\n')).toContain(text);
  });

  it('are absent from a run without CPU figures', () => {
    expect(
      fixedLoadPart({ ...results, openLoopRatios: [{ algorithm: 'HS256', fractionOfGoCapacity: 0.5, offeredRps: 5000, p99Ratio: null }] }),
    ).toEqual([]);
    expect(fixedLoadPart({ ...results, openLoop: null, openLoopRatios: null })).toEqual([]);
  });
});
