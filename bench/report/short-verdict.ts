/**
 * The run's answer in five lines, first in summary.md and report.html and printed last by
 * `npm run bench`: where and when it ran and how quiet the machine was; ours against Go,
 * Rust and the Node peer per scenario, from the headline ratios the verdicts read
 * (bench/macro/verdict.ts); and whether the run falls inside the range README.md
 * publishes, with the likely reason where it does not. Written from results.json alone.
 */
import { spansOne } from '../common/median-interval.js';
import { STOLEN_SHARE } from '../harness/contention.js';
import { SERVER_PACE_UTILIZATION } from '../macro/comparisons.js';
import { disturbedRounds } from '../macro/disturbance.js';
import type { MacroResults, RatioMetric, RatioResult } from '../macro/results.js';
import { type RunContextInput, loadNotation, machinePhrase, runDate } from './run-context.js';

/** A figure README.md publishes: the range of the medians of the runs it names. */
export interface PublishedRange {
  readonly comparison: 'ours-go' | 'ours-rust';
  readonly scenario: string;
  readonly metric: RatioMetric;
  readonly low: number;
  readonly high: number;
}

/**
 * README.md's headline ranges: HS256 1c 1x50, calls per server CPU-second, the medians of
 * the published runs of the current hot path on the 2-vCPU AMD EPYC VM
 * (bench/results/published/2026-11-27T23-17-instruction-diet, 2026-11-28T00-38-node-crypto-split,
 * 2026-11-28T01-05-floor-quiet and 2026-11-28T01-25-floor-quiet-2; Rust only in the last three).
 * test/bench/report/verdict.test.ts keeps README.md quoting these figures.
 */
export const PUBLISHED_RANGES: readonly PublishedRange[] = [
  { comparison: 'ours-go', scenario: 'single-hs256-1x50', metric: 'callsPerCpuSecond', low: 2.32, high: 2.52 },
  { comparison: 'ours-rust', scenario: 'single-hs256-1x50', metric: 'callsPerCpuSecond', low: 1.69, high: 1.97 },
];

/** The machine of the published runs, as results.json names it: what a run must match to be comparable. */
export const PUBLISHED_MACHINE = { cpuModel: 'AMD EPYC', availableCpus: 2, phrase: 'a 2-vCPU AMD EPYC VM' } as const;

/**
 * Share of disturbed measurements (⊘ ◐ ∿) above which the machine reads as busy: the quiet
 * published runs had 2-6 % (2026-11-27T11-39: 4 of 190; 2026-11-28T01-05: 8 of 128).
 */
export const BUSY_DISTURBED_SHARE = 0.1;

/** The peers the verdict names, in its order: the comparisons of bench/macro/comparisons.ts. */
const PEERS = [
  { comparison: 'ours-go', label: 'ours / Go' },
  { comparison: 'ours-rust', label: 'ours / Rust' },
  { comparison: 'ours-node-peer', label: 'ours / Node peer' },
] as const;

/** The part of results.json the verdict reads. */
export interface VerdictInput extends RunContextInput {
  readonly macro: MacroResults | null;
}

const METRIC_WORDS: Readonly<Record<RatioMetric, string>> = { rps: 'requests/s', callsPerCpuSecond: 'per CPU-s' };

/** `1.99x per CPU-s (1.92-2.18)`, `level (0.94-1.20)` where the interval includes 1.00. */
function ratioPhrase(result: RatioResult): string {
  const interval = result.interval;
  if (interval === null) return 'no rounds';
  const metric = METRIC_WORDS[result.metric];
  if (interval.low === null || interval.high === null) return `${interval.median.toFixed(2)}x ${metric} (no interval)`;
  const range = `(${interval.low.toFixed(2)}-${interval.high.toFixed(2)})`;
  return spansOne(interval) ? `level ${metric} ${range}` : `${interval.median.toFixed(2)}x ${metric} ${range}`;
}

interface Noise {
  readonly busy: boolean;
  readonly phrase: string;
}

/** How quiet the machine was: the measurements disturbed (⊘ ◐ ∿) and the steal. */
function noiseOf(input: VerdictInput): Noise {
  const macro = input.macro;
  if (macro === null || macro.cells.length === 0) return { busy: false, phrase: 'noise not measured (no ghz section)' };
  const { disturbed, rounds } = disturbedRounds(macro.cells);
  const share = rounds === 0 ? 0 : disturbed / rounds;
  const steal = macro.steal?.share ?? 0;
  // A load average above 1 at the start is usual on 2 vCPUs (the quiet published runs had it): it is not counted.
  const busy = share > BUSY_DISTURBED_SHARE || steal > STOLEN_SHARE;
  const parts = [`${disturbed} of ${rounds} measurements disturbed`, `steal ${(steal * 100).toFixed(1)} %`];
  return { busy, phrase: `the machine was ${busy ? 'busy' : 'quiet'} (${parts.join(', ')})` };
}

function runLine(input: VerdictInput, noise: Noise): string {
  return `**Run**: ${runDate(input.startedAt)}, profile ${input.options.profile}, on ${machinePhrase(input)}; ${noise.phrase}.`;
}

function peerLine(macro: MacroResults | null, peer: (typeof PEERS)[number]): string {
  const phrases = (macro?.scenarios ?? []).flatMap((scenario) => {
    const result = macro?.ratios.find((r) => r.scenario === scenario.id && r.comparison === peer.comparison && r.headline);
    return result === undefined ? [] : [`${scenario.label} ${ratioPhrase(result)}`];
  });
  return phrases.length === 0 ? `**${peer.label}**: not in this run.` : `**${peer.label}** (> 1.00x: ours better): ${phrases.join('; ')}.`;
}

/** Why this run's figure of a cell may fall outside the published range, from what the run recorded. */
function likelyReasons(input: VerdictInput, scenario: string, noise: Noise): string[] {
  const reasons: string[] = [];
  const { machine } = input;
  if (!machine.cpuModel.includes(PUBLISHED_MACHINE.cpuModel) || machine.availableCpus !== PUBLISHED_MACHINE.availableCpus) {
    reasons.push(`another machine than the published runs' (${PUBLISHED_MACHINE.phrase})`);
  }
  if (noise.busy) reasons.push('a busy machine');
  if (input.options.profile === 'smoke')
    reasons.push('the smoke profile (rounds of a fraction of a second check the harness, they measure nothing)');
  const ours = input.macro?.cells.find(
    (c) => c.scenario === scenario && input.macro?.servers.find((s) => s.name === c.server)?.role === 'ours',
  );
  const utilization = ours?.aggregate?.serverCpuUtilization.median;
  if (utilization !== undefined && utilization < SERVER_PACE_UTILIZATION) {
    reasons.push(
      `a latency-bound cell (ours ${Math.round(utilization * 100)} % busy, ghz set the pace): CPU per call below saturation moves with what else the machine runs`,
    );
  }
  return reasons;
}

/** One range against this run, `ours / Go 1.99x, outside 2.32x-2.52x`, or null where the run lacks the ratio. */
function rangePhrase(input: VerdictInput, range: PublishedRange): { text: string; inside: boolean } | null {
  const result = input.macro?.ratios.find(
    (r) => r.scenario === range.scenario && r.comparison === range.comparison && r.metric === range.metric,
  );
  const exact = result?.interval?.median;
  if (exact === undefined) return null;
  // Compared as printed (two decimals), as README.md's range is.
  const median = Math.round(exact * 100) / 100;
  const label = PEERS.find((p) => p.comparison === range.comparison)?.label ?? range.comparison;
  const inside = median >= range.low && median <= range.high;
  return {
    text: `${label} ${median.toFixed(2)}x, ${inside ? 'inside' : 'outside'} ${range.low.toFixed(2)}x-${range.high.toFixed(2)}x`,
    inside,
  };
}

/** The last line: each published range against this run, then, once, the likely reasons for those outside. */
function readmeLine(input: VerdictInput, noise: Noise): string {
  const scenarioId = PUBLISHED_RANGES[0]?.scenario ?? '';
  const scenario = input.macro?.scenarios.find((s) => s.id === scenarioId)?.label ?? 'HS256 1c 1x50';
  const phrases = PUBLISHED_RANGES.map((range) => rangePhrase(input, range)).filter((p) => p !== null);
  if (phrases.length === 0)
    return `**Against README.md's range**: not comparable, this run has no ${scenario} ours / Go or ours / Rust ratio.`;
  const head = `**Against README.md's range** (${scenario}, per CPU-s, ${PUBLISHED_MACHINE.phrase}): ${phrases.map((p) => p.text).join('; ')}`;
  if (phrases.every((p) => p.inside)) return `${head}.`;
  const reasons = likelyReasons(input, scenarioId, noise);
  return reasons.length === 0
    ? `${head}. No cause in this run's data: run again, or with more rounds (--rounds 16).`
    : `${head}. Likely: ${reasons.join('; ')}.`;
}

/**
 * The five lines, Markdown (bold names): the run and its noise; ours / Go, ours / Rust and
 * ours / Node peer per scenario; the run against README.md's published range.
 *
 * @example
 * ```ts
 * const lines = verdictLines(JSON.parse(readFileSync('results.json', 'utf8')));
 * console.log(lines.join('\n'));
 * ```
 */
export function verdictLines(input: VerdictInput): string[] {
  const noise = noiseOf(input);
  return [runLine(input, noise), ...PEERS.map((peer) => peerLine(input.macro, peer)), readmeLine(input, noise)];
}

/** The heading summary.md gives the verdict; report.html finds the section by it. */
export const VERDICT_HEADING = '## Verdict in five lines';

/**
 * The five lines, or one saying why there are none: the verdict is read from the figures
 * after they are written, and a figure it cannot read must not cost the summary or report.html.
 */
function safeVerdictLines(input: VerdictInput): string[] {
  try {
    return verdictLines(input);
  } catch (error) {
    return [`No verdict: results.json lacks a figure it needs (${(error as Error).message}); the sections below hold every figure.`];
  }
}

/** summary.md's first section: the five lines as a list, then the load notation its labels use. */
export function verdictSection(input: VerdictInput): string {
  const notation = loadNotation(input.macro?.scenarios ?? []);
  const lines = [VERDICT_HEADING, '', ...safeVerdictLines(input).map((l) => `- ${l}`)];
  if (notation !== null)
    lines.push('', `${notation}. Each ratio: median over the rounds (95 % interval); "level": the interval includes 1.00.`);
  return lines.join('\n');
}

/** The lines for a terminal: the Markdown bold marks dropped. */
export function plainVerdict(input: VerdictInput): string {
  return safeVerdictLines(input)
    .map((l) => l.replaceAll('**', ''))
    .join('\n');
}
