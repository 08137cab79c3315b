/**
 * The verdicts: one paragraph per scenario, written from the intervals of its headline
 * ratios only (comparisons.ts, headlineMetric), so that the text never claims more than
 * the rounds show.
 */
import { spansOne } from '../common/median-interval.js';
import { COMPARISONS, type Comparison } from './comparisons.js';
import type { MacroResults, RatioResult, ServerStatus } from './results.js';

const x = (value: number): string => value.toFixed(2);
const pct = (share: number): string => `${Math.round(share * 100)}`;

/** One sentence for one headline ratio, or null when it has no rounds. */
export function verdictSentence(comparison: Comparison, result: RatioResult, subject: ServerStatus, baseline: ServerStatus): string | null {
  const interval = result.interval;
  if (interval === null) return null;
  const s = subject.label;
  const b = baseline.label;
  const cpu = result.metric === 'callsPerCpuSecond';
  if (interval.low === null || interval.high === null) {
    const rounds = `${interval.n} round${interval.n === 1 ? '' : 's'}`;
    return `${s} / ${b}: ${x(interval.median)}x in ${cpu ? 'calls per server CPU-second' : 'requests/s'} over ${rounds}, too few for an interval`;
  }
  const { low, high } = interval;
  if (comparison.kind === 'ceiling') {
    if (cpu) {
      // callsPerCpuSecond(subject) / callsPerCpuSecond(echo) = echo's CPU per call / subject's: the stack's share of the call.
      if (spansOne(interval)) return `${s} costs no more CPU per call than ${b} (${x(low)}-${x(high)}x): its own work is not resolved`;
      if (low > 1) return `${s} costs less CPU per call than ${b} by ${x(low)}-${x(high)}x`;
      return `the ${subject.stack} stack (${b}) is ${pct(low)}-${pct(high)} % of ${s}'s CPU per call, its own work the rest`;
    }
    return spansOne(interval)
      ? `${s} is not distinguishable from ${b}, its ceiling, in requests/s (${x(low)}-${x(high)}x)`
      : `${s} reaches ${x(low)}-${x(high)}x of ${b}'s requests/s`;
  }
  const measure = cpu ? 'in server CPU per call' : 'in requests/s';
  const better = cpu ? 'cheaper per call' : 'faster';
  if (spansOne(interval)) return `${s} and ${b} are not distinguishable ${measure} (${x(low)}-${x(high)}x)`;
  return low > 1
    ? `${s} is ${better} than ${b} by ${x(low)}-${x(high)}x${cpu ? ' (server CPU)' : ''}`
    : `${b} is ${better} than ${s} by ${x(1 / high)}-${x(1 / low)}x${cpu ? ' (server CPU)' : ''}`;
}

/** `**label** (what the headline is): sentence; sentence.` per scenario with ratios. */
export function verdictParagraphs(results: MacroResults): string[] {
  const paragraphs: string[] = [];
  for (const scenario of results.scenarios) {
    const sentences: string[] = [];
    const metrics = new Set<string>();
    for (const comparison of COMPARISONS) {
      const result = results.ratios.find((r) => r.scenario === scenario.id && r.comparison === comparison.id && r.headline);
      if (result === undefined) continue;
      const subject = results.servers.find((s) => s.name === result.subject);
      const baseline = results.servers.find((s) => s.name === result.baseline);
      if (subject === undefined || baseline === undefined) continue;
      const sentence = verdictSentence(comparison, result, subject, baseline);
      if (sentence === null) continue;
      sentences.push(sentence);
      metrics.add(result.metric);
    }
    if (sentences.length === 0) continue;
    const basis =
      metrics.size === 2
        ? 'requests/s where the servers set the pace, server CPU per call elsewhere'
        : metrics.has('rps')
          ? 'requests/s: the servers set the pace'
          : 'server CPU per call: ghz or the round trip set the pace';
    paragraphs.push(`**${scenario.label}** (${basis}): ${sentences.join('; ')}.`);
  }
  return paragraphs;
}
