import { CONFIDENCE, MIN_VALUES_FOR_INTERVAL } from '../common/median-interval.js';
import { formatRatioInterval } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import { COMPARISONS, type ComparisonKind } from './comparisons.js';
import type { MacroResults, RatioMetric } from './results.js';
import { verdictParagraphs } from './verdict.js';

const METRIC_TITLES: Readonly<Record<RatioMetric, string>> = {
  rps: 'Requests/s (OK responses)',
  callsPerCpuSecond: 'Calls per server CPU-second (the inverse of the ratio of CPU per call)',
};

/**
 * One table per metric and kind: rows = scenarios, columns = the comparisons of that kind
 * that have a pair in this run; null where none has. The ceilings (a server against its own
 * stack's echo) get tables of their own: beside the peers, "Go / its echo" below 1.00 reads
 * as a loss of jwt-grpc's.
 */
function ratioTable(results: MacroResults, metric: RatioMetric, kind: ComparisonKind): string | null {
  const comparisons = COMPARISONS.filter((c) => c.kind === kind && results.ratios.some((r) => r.comparison === c.id));
  if (comparisons.length === 0) return null;
  const rows = results.scenarios
    .filter((scenario) => results.ratios.some((r) => r.scenario === scenario.id && comparisons.some((c) => c.id === r.comparison)))
    .map((scenario) => [
      scenario.label,
      ...comparisons.map((comparison) => {
        const result = results.ratios.find((r) => r.scenario === scenario.id && r.comparison === comparison.id && r.metric === metric);
        if (result === undefined) return '—';
        const text = formatRatioInterval(result.interval);
        return result.headline ? `**${text}**` : text;
      }),
    ]);
  const title =
    kind === 'peer'
      ? METRIC_TITLES[metric]
      : `${METRIC_TITLES[metric]}, each server against the echo of its own stack (a ceiling, not a peer)`;
  return `${title}\n\n${markdownTable(['scenario', ...comparisons.map((c) => c.label)], rows)}`;
}

/** The ratios (both metrics) and the verdicts written from them. */
export function ratioSection(results: MacroResults): string {
  const heading = `### Ratios: median of the per-round ratios (${Math.round(CONFIDENCE * 100)} % bootstrap interval)`;
  if (results.ratios.length === 0) return `${heading}\n\nNo comparison had both of its servers in this run.`;
  const { seed, resamples } = results.settings.bootstrap;
  const intro =
    'Each ratio is taken within one round, both servers measured minutes apart at most, so that what slowed the ' +
    'machine for the whole round cancels; the table gives the median over the rounds and its interval (percentile ' +
    `bootstrap of the median, ${resamples.toLocaleString('en-US')} resamples, seed ${seed}; none below ${MIN_VALUES_FOR_INTERVAL} rounds). ` +
    'An interval that includes 1.00 reads "no difference shown". > 1.00x: the first server is better: more requests/s, ' +
    'or more calls per CPU-second, i.e. less CPU per call. **Bold**: the figure the verdict uses (requests/s where both ' +
    'servers set the pace, CPU per call where ghz or the round trip did). ours = jwt-grpc (1 core) or jwt-grpc-cluster ' +
    '(N cores); Node peer = node-fast-jwt(-cluster); its echo = the echo server of the same gRPC stack (grpc-js, grpc-go), ' +
    'where it is a ceiling (the one-process grpc-js echo is none for an N-process cluster). Ratios across runs or ' +
    'machines are not computed.';
  const verdicts = verdictParagraphs(results);
  return [
    heading,
    intro,
    ...(['peer', 'ceiling'] as const).flatMap((kind) =>
      [ratioTable(results, 'rps', kind), ratioTable(results, 'callsPerCpuSecond', kind)].filter((t): t is string => t !== null),
    ),
    '### Verdicts, from the intervals of the bold ratios',
    verdicts.length === 0 ? 'No ratio had rounds to judge from.' : verdicts.join('\n\n'),
  ].join('\n\n');
}
