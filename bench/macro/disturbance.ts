import { CONTENDED_SHARE, STOLEN_SHARE } from '../harness/contention.js';
import { PROBE_BLOCK_BYTES, PROBE_BLOCKS, PROBE_REPEATS } from '../harness/probe-work.js';
import type { CellResult, MacroResults, RoundResult, StealSummary } from './results.js';

const pct = (fraction: number): string => `${(fraction * 100).toFixed(1)} %`;
const whole = (fraction: number): string => `${Math.round(fraction * 100)} %`;
const signed = (fraction: number): string => `${fraction >= 0 ? '+' : '−'}${Math.abs(Math.round(fraction * 100))} %`;

/** Steal over every measured round: their mean share, the largest, and how many passed the mark. */
export function summarizeSteal(cells: readonly CellResult[]): StealSummary | null {
  const rounds = cells.flatMap((c) => c.rounds);
  if (rounds.length === 0) return null;
  const shares = rounds.map((r) => Math.max(r.stealShare, r.serverStealShare));
  return {
    share: rounds.reduce((sum, r) => sum + r.stealShare, 0) / rounds.length,
    maxRoundShare: Math.max(...shares),
    roundsOverThreshold: shares.filter((s) => s > STOLEN_SHARE).length,
    rounds: rounds.length,
  };
}

/** The measurements that other processes, steal or a slowed VM disturbed (⊘, ◐, ∿). */
export function disturbedRounds(cells: readonly CellResult[]): { disturbed: number; rounds: number } {
  const rounds = cells.flatMap((c) => c.rounds);
  const disturbed = rounds.filter((r) => r.flags.some((f) => f === 'contended' || f === 'stolen' || f === 'slowed')).length;
  return { disturbed, rounds: rounds.length };
}

function count(rounds: readonly RoundResult[], flag: RoundResult['flags'][number]): number {
  return rounds.filter((r) => r.flags.includes(flag)).length;
}

/** What the machine did while the run measured: steal, the speed probe, other processes. */
export function disturbanceSection(results: MacroResults): string | null {
  const rounds = results.cells.flatMap((c) => c.rounds);
  if (rounds.length === 0) return null;
  const lines: string[] = [];
  const steal = results.steal;
  if (steal !== null) {
    lines.push(
      `- Steal: the hypervisor took ${pct(steal.share)} of the benchmark CPUs' time during the measurements ` +
        `(the most in one: ${pct(steal.maxRoundShare)}); ${steal.roundsOverThreshold} of ${steal.rounds} measurements over ${whole(STOLEN_SHARE)} (◐).`,
    );
  }
  const probe = results.probe;
  if (probe !== null) {
    const work = `SHA-256 of ${(PROBE_BLOCKS * PROBE_BLOCK_BYTES) / 1024 / 1024} MiB, median of ${PROBE_REPEATS} timings, on each server CPU before every measurement, all servers paused`;
    const perCpu = probe.cpus.map(
      (c) =>
        `CPU ${c.cpu}: median ${c.median.toFixed(2)} ms, p10-p90 ${c.p10.toFixed(2)}-${c.p90.toFixed(2)} ms ` +
        `(${signed(c.p10 / c.median - 1)} to ${signed(c.p90 / c.median - 1)}), min-max ${c.min.toFixed(2)}-${c.max.toFixed(2)} ms over ${c.n} probes`,
    );
    lines.push(
      `- Speed probe (${work}): ${perCpu.join('; ')}. ${count(rounds, 'slowed')} of ${rounds.length} measurements had a probe ` +
        `before or after them > ${whole(probe.threshold)} off its CPU's median (∿): the VM itself ran faster or slower, which steal does not always show.`,
    );
  }
  lines.push(
    `- Other processes: > ${whole(CONTENDED_SHARE)} of the benchmark's CPUs in ${count(rounds, 'contended')} of ${rounds.length} measurements (⊘).`,
  );
  const { disturbed } = disturbedRounds(results.cells);
  lines.push(
    `- ${disturbed} of ${rounds.length} measurements were disturbed in one of these ways. Per-round ratios cancel what slows both ` +
      'servers of a round alike; what remains widens the intervals.',
  );
  return ['### How quiet the machine was', ...lines].join('\n');
}
