import { resolve } from 'node:path';
import { DEFAULT_RESULTS_DIR } from '../kit/paths.js';
import { type ParsedCommandLine, UsageError, parseChoices, parseFlags, parseInteger, parseList, parseNumber } from '../kit/program.js';
import { FEATURE_NAMES, featureSelection } from '../macro/features.js';
import { BENCH_ALGORITHMS } from './algorithms.js';
import { PROFILES, type ProfileName } from './profiles.js';
import type { BenchOptions, LoadSelection } from './types.js';

const OPTION_SPEC = {
  quick: { type: 'boolean' },
  full: { type: 'boolean' },
  smoke: { type: 'boolean' },
  'micro-only': { type: 'boolean' },
  'ghz-only': { type: 'boolean' },
  'load-only': { type: 'boolean' },
  h2load: { type: 'boolean' },
  rest: { type: 'boolean' },
  'open-loop': { type: 'boolean' },
  'fixed-load': { type: 'boolean' },
  'warmup-sweep': { type: 'boolean' },
  startup: { type: 'boolean' },
  'no-load': { type: 'boolean' },
  servers: { type: 'string' },
  algorithms: { type: 'string' },
  cells: { type: 'string' },
  features: { type: 'string' },
  'baseline-ref': { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  'server-cores': { type: 'string' },
  html: { type: 'boolean' },
  'no-html': { type: 'boolean' },
  label: { type: 'string' },
  out: { type: 'string' },
} as const;

/**
 * Parses the command line (without `node` and the script). Throws {@link UsageError}
 * for an unknown option, a bad value or a contradiction (e.g. `--full --smoke`).
 */
export function parseCommandLine(argv: readonly string[], serverNames: readonly string[]): ParsedCommandLine<BenchOptions> {
  const values = parseFlags(argv, OPTION_SPEC);
  if (values === 'help') return { kind: 'help' };

  const profile = pickProfile(values);
  const only = (['micro-only', 'ghz-only', 'load-only'] as const).filter((name) => values[name] === true);
  if (only.length > 1) throw new UsageError(`${only.map((n) => '--' + n).join(' and ')} exclude each other`);
  if (values.html === true && values['no-html'] === true) throw new UsageError('--html and --no-html exclude each other');
  const defaults = PROFILES[profile];
  const features = values.features === undefined ? null : parseChoices('--features', values.features, FEATURE_NAMES);
  const selection = features === null ? null : featureSelection(features);
  return {
    kind: 'run',
    options: {
      profile,
      micro: values['ghz-only'] !== true && values['load-only'] !== true,
      macro: values['micro-only'] !== true && values['load-only'] !== true,
      load: pickLoad(values, profile),
      servers: values.servers === undefined ? (selection?.servers ?? null) : parseChoices('--servers', values.servers, serverNames),
      algorithms: values.algorithms === undefined ? null : parseChoices('--algorithms', values.algorithms, BENCH_ALGORITHMS),
      cells: values.cells === undefined ? (selection?.cells ?? null) : parseList('--cells', values.cells).map((c) => c.toLowerCase()),
      features,
      jwksThroughput: selection?.jwksThroughput ?? false,
      revokeThroughput: selection?.revokeThroughput ?? false,
      keyBackends: selection?.keyBackends ?? [],
      baselineRef: values['baseline-ref'] === undefined ? null : parseRef(values['baseline-ref']),
      scope: defaults.scope,
      durationS: values.duration === undefined ? defaults.durationS : parseNumber('--duration', values.duration, 0.1),
      warmupS: values.warmup === undefined ? defaults.warmupS : parseNumber('--warmup', values.warmup, 0),
      rounds: values.rounds === undefined ? defaults.rounds : parseInteger('--rounds', values.rounds, 1),
      serverCores:
        values['server-cores'] === undefined
          ? null
          : [...new Set(parseList('--server-cores', values['server-cores']).map((n) => parseInteger('--server-cores', n, 1)))],
      html: values.html === true ? true : values['no-html'] === true ? false : defaults.html,
      label: values.label === undefined ? null : parseLabel(values.label),
      out: resolve(values.out ?? DEFAULT_RESULTS_DIR),
      printSummary: true,
    },
  };
}

/** A git ref as `--baseline-ref` takes it: a branch, tag, hash or `hash^`, never an option or a path outside git's syntax. */
function parseRef(raw: string): string {
  const ref = raw.trim();
  if (!/^[\w./^~@{}-]+$/.test(ref) || ref.startsWith('-')) throw new UsageError(`--baseline-ref: ${JSON.stringify(raw)} is not a git ref`);
  return ref;
}

/**
 * The load sections: the profile's, unless --micro-only or --ghz-only (none) or --no-load
 * (none); `--h2load`, `--open-loop`, `--fixed-load`, `--warmup-sweep`, `--rest` and `--startup` add theirs in every case, and with
 * `--load-only` they are the selection (without any of them, the profile's).
 */
function pickLoad(
  values: {
    'micro-only'?: boolean;
    'ghz-only'?: boolean;
    'load-only'?: boolean;
    h2load?: boolean;
    rest?: boolean;
    'open-loop'?: boolean;
    'fixed-load'?: boolean;
    'warmup-sweep'?: boolean;
    startup?: boolean;
    'no-load'?: boolean;
  },
  profile: ProfileName,
): LoadSelection {
  const asked = {
    h2load: values.h2load === true,
    openLoop: values['open-loop'] === true,
    fixedLoad: values['fixed-load'] === true,
    warmupSweep: values['warmup-sweep'] === true,
    rest: values.rest === true,
    startup: values.startup === true,
  };
  const anyAsked = asked.h2load || asked.openLoop || asked.fixedLoad || asked.warmupSweep || asked.rest || asked.startup;
  if (values['no-load'] === true) {
    if (anyAsked || values['load-only'] === true)
      throw new UsageError('--no-load excludes --load-only, --h2load, --open-loop, --fixed-load, --warmup-sweep, --rest and --startup');
    return { h2load: false, openLoop: false, fixedLoad: false, warmupSweep: false, rest: false, startup: false };
  }
  const defaults = PROFILES[profile].load;
  if (values['load-only'] === true && anyAsked) return asked;
  const byProfile = values['micro-only'] !== true && values['ghz-only'] !== true;
  return {
    h2load: asked.h2load || (byProfile && defaults.h2load),
    openLoop: asked.openLoop || (byProfile && defaults.openLoop),
    fixedLoad: asked.fixedLoad || (byProfile && defaults.fixedLoad),
    warmupSweep: asked.warmupSweep || (byProfile && defaults.warmupSweep),
    rest: asked.rest || (byProfile && defaults.rest),
    startup: asked.startup || (byProfile && defaults.startup),
  };
}

/** A machine label: one line of plain text, short enough for a header. */
function parseLabel(raw: string): string {
  const label = raw.trim();
  if (label === '' || label.length > 80 || /[\n\r|]/.test(label))
    throw new UsageError('--label: expected one line of up to 80 characters, without |');
  return label;
}

function pickProfile(values: { quick?: boolean; full?: boolean; smoke?: boolean }): ProfileName {
  const chosen = (['quick', 'full', 'smoke'] as const).filter((name) => values[name] === true);
  if (chosen.length > 1) throw new UsageError(`choose one profile, not ${chosen.map((n) => '--' + n).join(' and ')}`);
  return chosen[0] ?? 'quick';
}
