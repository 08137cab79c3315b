/**
 * The speed probe: a fixed CPU-bound task (probe-child.ts: SHA-256 of 3 MiB, median of 5
 * timings) timed on each server CPU before every measurement, while every server is
 * paused. Steal is only the part of a slowdown the guest can see: a busy neighbour on
 * the host (shared caches, memory bandwidth, an SMT sibling, a lower clock) slows the
 * VM without a tick of steal. The probe's time follows all of it. A measurement whose
 * probes (just before and just after it) moved by more than PROBE_DISTURBANCE from their
 * CPU's median over the run is marked (∿); per-round ratios already cancel what slows
 * every server of a round alike.
 */
import { existsSync } from 'node:fs';
import { repoPath } from '../kit/paths.js';
import { median } from '../common/stats.js';
import { quantileOfSorted } from '../common/median-interval.js';
import { type CorePlan, pinnedCommand } from './cores.js';
import { type LaunchedProcess, launch } from '../kit/launcher.js';

/**
 * Relative change of a probe from its CPU's median over the run from which the
 * measurements it brackets are marked. The probe's own spread on a quiet core is a few
 * percent (median of 5 timings of ~2 ms); a neighbour taking a share of the core, or a
 * host slowing the VM, moves it by 20 % and more. 15 % sits clear of the first and
 * catches the second.
 */
export const PROBE_DISTURBANCE = 0.15;

const CHILD = repoPath('dist', 'bench', 'harness', 'probe-child.js');
const PROBE_TIMEOUT_MS = 10_000;

/** One probe of one CPU. */
export interface ProbeReading {
  readonly cpu: number;
  readonly ms: number;
  /** ms since the run started. */
  readonly atMs: number;
}

/** The probe's spread over a run, per CPU, for the summary. */
export interface ProbeSummary {
  readonly threshold: number;
  readonly cpus: readonly {
    readonly cpu: number;
    readonly n: number;
    readonly median: number;
    readonly p10: number;
    readonly p90: number;
    readonly min: number;
    readonly max: number;
  }[];
}

/** probe / baseline - 1: how far a probe moved from its CPU's median. */
export function probeDeviation(ms: number, baselineMs: number): number {
  return ms / baselineMs - 1;
}

/** Whether a deviation (either way) is past {@link PROBE_DISTURBANCE}. */
export function probeDisturbed(deviation: number | null, threshold: number = PROBE_DISTURBANCE): boolean {
  return deviation !== null && Math.abs(deviation) > threshold;
}

/** Each CPU's median probe over the run: what "moved" is measured against. */
export function probeBaselines(readings: readonly ProbeReading[]): Map<number, number> {
  const byCpu = new Map<number, number[]>();
  for (const r of readings) byCpu.set(r.cpu, [...(byCpu.get(r.cpu) ?? []), r.ms]);
  return new Map([...byCpu].map(([cpu, values]) => [cpu, median(values)]));
}

/**
 * The largest |deviation| among the probes of a measurement (before and after, each
 * server CPU), against their CPUs' baselines; null when no probe was taken.
 */
export function largestDeviation(
  cpus: readonly number[],
  probes: readonly (readonly number[])[],
  baselines: ReadonlyMap<number, number>,
): number | null {
  let largest: number | null = null;
  for (const values of probes) {
    values.forEach((ms, i) => {
      const baseline = baselines.get(cpus[i] as number);
      if (baseline === undefined || !(baseline > 0)) return;
      const deviation = probeDeviation(ms, baseline);
      if (largest === null || Math.abs(deviation) > Math.abs(largest)) largest = deviation;
    });
  }
  return largest;
}

export function summarizeProbes(readings: readonly ProbeReading[]): ProbeSummary {
  const byCpu = new Map<number, number[]>();
  for (const r of readings) byCpu.set(r.cpu, [...(byCpu.get(r.cpu) ?? []), r.ms]);
  return {
    threshold: PROBE_DISTURBANCE,
    cpus: [...byCpu]
      .sort(([a], [b]) => a - b)
      .map(([cpu, values]) => {
        const sorted = [...values].sort((a, b) => a - b);
        return {
          cpu,
          n: sorted.length,
          median: median(sorted),
          p10: quantileOfSorted(sorted, 0.1),
          p90: quantileOfSorted(sorted, 0.9),
          min: sorted[0] as number,
          max: sorted.at(-1) as number,
        };
      }),
  };
}

/** One probe process per CPU, started on first use, pinned to it when the plan pins. */
export class SpeedProbes {
  readonly #plan: CorePlan;
  readonly #startedAt: number;
  readonly #children = new Map<number, { process: LaunchedProcess; sequence: number }>();
  readonly #readings: ProbeReading[] = [];

  constructor(plan: CorePlan, startedAt: number = performance.now()) {
    if (!existsSync(CHILD)) throw new Error(`${CHILD} does not exist: run \`npm run build\` first`);
    this.#plan = plan;
    this.#startedAt = startedAt;
  }

  /** Every reading so far. */
  get readings(): readonly ProbeReading[] {
    return this.#readings;
  }

  /** Probes each CPU in turn (never two at once: they would compete) and returns the ms per CPU. */
  async take(cpus: readonly number[]): Promise<number[]> {
    const times: number[] = [];
    for (const cpu of cpus) {
      const child = await this.#child(cpu);
      child.sequence += 1;
      const from = child.process.stdout.length;
      child.process.signal('SIGUSR1');
      const { match } = await child.process.waitFor('stdout', new RegExp(`^probe ${child.sequence} (\\S+)$`, 'm'), PROBE_TIMEOUT_MS, from);
      const ms = Number(match[1]);
      this.#readings.push({ cpu, ms, atMs: performance.now() - this.#startedAt });
      times.push(ms);
    }
    return times;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#children.values()].map((c) => c.process.stop(2000)));
    this.#children.clear();
  }

  async #child(cpu: number): Promise<{ process: LaunchedProcess; sequence: number }> {
    const existing = this.#children.get(cpu);
    if (existing !== undefined) return existing;
    const { command, args } = pinnedCommand(this.#plan, [cpu], process.execPath, [CHILD]);
    const child = { process: launch(command, args), sequence: 0 };
    this.#children.set(cpu, child);
    await child.process.waitFor('stdout', /^probe ready$/m, PROBE_TIMEOUT_MS);
    return child;
  }
}
