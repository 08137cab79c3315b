/**
 * The command-line pattern of `npm run bench`, `npm run soak` and `npm run profile`:
 * strict options, `-h`/`--help`, a usage error that exits 2, a failure that exits 1,
 * and cleanups that still run when the program is interrupted.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { runCleanups } from './cleanup.js';

/** A mistake in the command line or the options: the program prints the message and exits with status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What a command line asks for: the help text, or a run with these options. */
export type ParsedCommandLine<T> = { readonly kind: 'help' } | { readonly kind: 'run'; readonly options: T };

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

type FlagValues<T extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T & typeof HELP_OPTION; strict: true; allowPositionals: false }>
>['values'];

/**
 * Parses `argv` (without `node` and the script) against `spec` plus `-h`/`--help`:
 * 'help' when asked for, else the values. An unknown option, a missing value or a
 * positional argument throws {@link UsageError}.
 */
export function parseFlags<T extends ParseArgsOptionsConfig>(argv: readonly string[], spec: T): 'help' | FlagValues<T> {
  let values: FlagValues<T>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: { ...spec, ...HELP_OPTION }, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return (values as { help?: boolean }).help === true ? 'help' : values;
}

/** A number from `min` to `max`. */
export function parseNumber(option: string, raw: string, min: number, max = Number.POSITIVE_INFINITY): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${option}: expected a number ${range}, got "${raw}"`);
  }
  return value;
}

/** A whole number from `min` to `max`. */
export function parseInteger(option: string, raw: string, min: number, max = Number.POSITIVE_INFINITY): number {
  const value = parseNumber(option, raw, min, max);
  if (!Number.isInteger(value)) throw new UsageError(`${option}: expected a whole number, got "${raw}"`);
  return value;
}

/** A non-empty comma-separated list. */
export function parseList(option: string, raw: string): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new UsageError(`${option}: expected a comma-separated list`);
  return items;
}

/** A value that must be one of `known`. */
export function parseChoice<K extends string>(option: string, raw: string, known: readonly K[]): K {
  if (!(known as readonly string[]).includes(raw)) throw new UsageError(`${option}: "${raw}" is not one of ${known.join(', ')}`);
  return raw as K;
}

/** A list whose items must each be one of `known`; repeats are dropped. */
export function parseChoices<K extends string>(option: string, raw: string, known: readonly K[]): K[] {
  return [...new Set(parseList(option, raw).map((item) => parseChoice(option, item, known)))];
}

export interface Program<T> {
  /** Prefix of the program's messages, e.g. `bench`. */
  readonly name: string;
  /** `import.meta.url` of the program's file: it runs only when that file is the entry point. */
  readonly url: string;
  help(): string;
  parse(argv: readonly string[]): ParsedCommandLine<T>;
  /** Does the work; resolves to the exit status. Registered cleanups run on SIGINT/SIGTERM. */
  run(options: T): Promise<number>;
}

/**
 * Runs a program when its file is the entry point (a test may import it instead):
 * help on stdout (0), usage errors on stderr (2), failures with their stack (1), else
 * the status `run` returns; SIGHUP, SIGINT and SIGTERM run the cleanups and exit 129, 130 and 143.
 */
export async function runProgram<T>(program: Program<T>): Promise<void> {
  if (!isEntryPoint(program.url)) return;
  process.exit(await statusOf(program, process.argv.slice(2)));
}

async function statusOf<T>(program: Program<T>, argv: readonly string[]): Promise<number> {
  try {
    const parsed = program.parse(argv);
    if (parsed.kind === 'help') {
      process.stdout.write(program.help());
      return 0;
    }
    // SIGHUP too: a closed terminal or session would otherwise leave paused servers behind.
    for (const [signal, status] of [
      ['SIGHUP', 129],
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      process.once(signal, () => {
        runCleanups();
        process.exit(status);
      });
    }
    return await program.run(parsed.options);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${program.name}: ${error.message}\nRun with --help for the options.\n`);
      return 2;
    }
    process.stderr.write(`${program.name}: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  } finally {
    runCleanups();
  }
}

function isEntryPoint(url: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(url));
  } catch {
    return false;
  }
}
