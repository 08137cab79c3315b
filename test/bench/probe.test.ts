import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { repoPath } from '../../bench/kit/paths.js';
import { planCores } from '../../bench/harness/cores.js';
import {
  PROBE_DISTURBANCE,
  SpeedProbes,
  largestDeviation,
  probeBaselines,
  probeDeviation,
  probeDisturbed,
  summarizeProbes,
} from '../../bench/harness/probe.js';
import { roundFlags } from '../../bench/macro/aggregate.js';

describe("the probe's disturbance rule", () => {
  it("measures how far a probe moved from its CPU's median, either way", () => {
    expect(probeDeviation(2.3, 2)).toBeCloseTo(0.15, 12);
    expect(probeDeviation(1.5, 2)).toBeCloseTo(-0.25, 12);
  });

  it(`marks a move past ${PROBE_DISTURBANCE * 100} %, slower or faster, and nothing without a probe`, () => {
    expect(probeDisturbed(0.1)).toBe(false);
    expect(probeDisturbed(PROBE_DISTURBANCE)).toBe(false);
    expect(probeDisturbed(0.16)).toBe(true);
    expect(probeDisturbed(-0.2)).toBe(true);
    expect(probeDisturbed(null)).toBe(false);
  });

  it('judges each CPU against its own median over the run', () => {
    const readings = [
      { cpu: 0, ms: 2, atMs: 0 },
      { cpu: 0, ms: 2.1, atMs: 10 },
      { cpu: 0, ms: 1.9, atMs: 20 },
      { cpu: 1, ms: 4, atMs: 30 },
    ];
    const baselines = probeBaselines(readings);
    expect(baselines).toEqual(
      new Map([
        [0, 2],
        [1, 4],
      ]),
    );
    // Before and after a measurement on CPUs 0 and 1: the largest move wins, with its sign.
    expect(
      largestDeviation(
        [0, 1],
        [
          [2.1, 4],
          [2, 3],
        ],
        baselines,
      ),
    ).toBeCloseTo(-0.25, 12);
    expect(largestDeviation([0], [[], []], baselines)).toBeNull();
  });

  it('marks the round of a measurement whose probe moved', () => {
    const round = {
      round: 1,
      startedAtMs: 0,
      ghz: {
        count: 1,
        okCount: 1,
        nonOkByStatus: {},
        errors: {},
        totalSeconds: 1,
        rpsOk: 1,
        rpsAllResponses: 1,
        latencyMs: { mean: 1, p50: 1, p90: 1, p99: 1 },
        endReason: '',
      },
      serverCpuSeconds: 1,
      serverCpuUsPerRequest: 1,
      serverCpuUtilization: 1,
      loadCpuUtilization: 0.5,
      ghzCpuSeconds: 1,
      foreignCpuShare: 0,
      serverStealShare: 0.02,
      stealShare: 0.02,
      probeMs: { before: [2], after: [2.6] },
      reportFile: 'x',
    };
    expect(roundFlags({ ...round, probeDeviation: 0.3 })).toEqual(['slowed']);
    expect(roundFlags({ ...round, probeDeviation: 0.05 })).toEqual([]);
    expect(roundFlags({ ...round, probeDeviation: null, serverStealShare: 0.12 })).toEqual(['stolen']);
  });

  it('summarizes the spread per CPU', () => {
    const readings = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((ms, i) => ({ cpu: 0, ms, atMs: i }));
    expect(summarizeProbes(readings)).toEqual({
      threshold: PROBE_DISTURBANCE,
      cpus: [{ cpu: 0, n: 11, median: 6, p10: 2, p90: 10, min: 1, max: 11 }],
    });
  });
});

describe.skipIf(process.platform !== 'linux')('SpeedProbes', () => {
  const probes = existsSync(repoPath('dist', 'bench', 'harness', 'probe-child.js')) ? new SpeedProbes(planCores(null)) : null;
  afterAll(() => probes?.close());

  it('times the fixed hashing on a pinned CPU, a few ms each time', async () => {
    expect(probes, 'dist/ missing: run npm run build').not.toBeNull();
    const cpu = planCores(null).single.serverCpus[0] as number;
    const first = await (probes as SpeedProbes).take([cpu]);
    const second = await (probes as SpeedProbes).take([cpu]);
    for (const ms of [...first, ...second]) {
      expect(ms).toBeGreaterThan(0.1);
      expect(ms).toBeLessThan(500);
    }
    expect((probes as SpeedProbes).readings.map((r) => r.cpu)).toEqual([cpu, cpu]);
  });
});
