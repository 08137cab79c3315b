import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_RESULTS_DIR } from '../common/paths.js';
import { type BenchAlgorithm, BENCH_ALGORITHMS, isBenchAlgorithm } from './algorithms.js';
import { PROFILES, type ProfileName } from './profiles.js';
import type { BenchOptions } from './types.js';
import { UsageError } from './usage-error.js';

export type ParsedCommandLine = { readonly kind: 'help' } | { readonly kind: 'run'; readonly options: BenchOptions };

const OPTION_SPEC = {
  help: { type: 'boolean', short: 'h' },
  quick: { type: 'boolean' },
  full: { type: 'boolean' },
  smoke: { type: 'boolean' },
  'micro-only': { type: 'boolean' },
  'ghz-only': { type: 'boolean' },
  servers: { type: 'string' },
  algorithms: { type: 'string' },
  cells: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  repetitions: { type: 'string' },
  'server-cores': { type: 'string' },
  html: { type: 'boolean' },
  'no-html': { type: 'boolean' },
  out: { type: 'string' },
} as const;

/**
 * Parses the command line (without `node` and the script). Throws {@link UsageError}
 * for an unknown option, a bad value or a contradiction (e.g. `--full --smoke`).
 */
export function parseCommandLine(argv: readonly string[], serverNames: readonly string[]): ParsedCommandLine {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTION_SPEC, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help === true) return { kind: 'help' };

  const profile = pickProfile(values);
  if (values['micro-only'] === true && values['ghz-only'] === true) {
    throw new UsageError('--micro-only and --ghz-only exclude each other');
  }
  if (values.html === true && values['no-html'] === true) throw new UsageError('--html and --no-html exclude each other');
  const defaults = PROFILES[profile];
  return {
    kind: 'run',
    options: {
      profile,
      micro: values['ghz-only'] !== true,
      macro: values['micro-only'] !== true,
      servers: values.servers === undefined ? null : parseServers(values.servers, serverNames),
      algorithms: values.algorithms === undefined ? null : parseAlgorithms(values.algorithms),
      cells: values.cells === undefined ? null : parseList('--cells', values.cells).map((c) => c.toLowerCase()),
      durationS: values.duration === undefined ? defaults.durationS : parseNumber('--duration', values.duration, 0.1),
      warmupS: values.warmup === undefined ? defaults.warmupS : parseNumber('--warmup', values.warmup, 0),
      repetitions:
        values.repetitions === undefined ? defaults.repetitions : parseInteger('--repetitions', values.repetitions, 1),
      serverCores: values['server-cores'] === undefined ? null : parseInteger('--server-cores', values['server-cores'], 1),
      html: values.html === true ? true : values['no-html'] === true ? false : defaults.html,
      out: resolve(values.out ?? DEFAULT_RESULTS_DIR),
      printSummary: true,
    },
  };
}

function pickProfile(values: { quick?: boolean; full?: boolean; smoke?: boolean }): ProfileName {
  const chosen = (['quick', 'full', 'smoke'] as const).filter((name) => values[name] === true);
  if (chosen.length > 1) throw new UsageError(`choose one profile, not ${chosen.map((n) => '--' + n).join(' and ')}`);
  return chosen[0] ?? 'quick';
}

function parseList(option: string, raw: string): string[] {
  const items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new UsageError(`${option}: expected a comma-separated list`);
  return items;
}

function parseServers(raw: string, known: readonly string[]): string[] {
  const names = parseList('--servers', raw);
  for (const name of names) {
    if (!known.includes(name)) throw new UsageError(`--servers: unknown server "${name}" (known: ${known.join(', ')})`);
  }
  return [...new Set(names)];
}

function parseAlgorithms(raw: string): BenchAlgorithm[] {
  const names = parseList('--algorithms', raw);
  const result: BenchAlgorithm[] = [];
  for (const name of names) {
    if (!isBenchAlgorithm(name)) {
      throw new UsageError(`--algorithms: "${name}" is not one of ${BENCH_ALGORITHMS.join(', ')}`);
    }
    if (!result.includes(name)) result.push(name);
  }
  return result;
}

function parseNumber(option: string, raw: string, min: number): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min) {
    throw new UsageError(`${option}: expected a number >= ${min}, got "${raw}"`);
  }
  return value;
}

function parseInteger(option: string, raw: string, min: number): number {
  const value = parseNumber(option, raw, min);
  if (!Number.isInteger(value)) throw new UsageError(`${option}: expected a whole number, got "${raw}"`);
  return value;
}
