/**
 * The benchmark harness: `npm run bench [-- options]` (see `--help` and bench/README.md).
 * Programmatic use: `runBench(options)`; this file runs the CLI only when it is the
 * entry point.
 */
import { realpathSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerCleanup, runCleanups } from './common/cleanup.js';
import { machineInfo, versions } from './common/machine.js';
import { REPO_ROOT } from './common/paths.js';
import { createRunDir, updateLatestLink } from './common/results-dir.js';
import { planCores } from './ghz/cores.js';
import { locateGhz } from './ghz/ghz-binary.js';
import type { MacroResults } from './ghz/results.js';
import { runMacro } from './ghz/run.js';
import { buildScenarios, filterScenarios } from './ghz/scenarios.js';
import { SERVER_NAMES } from './ghz/servers.js';
import type { MicroResults } from './micro/results.js';
import { runMicro } from './micro/run.js';
import { DEFAULT_MACRO_ALGORITHMS, DEFAULT_MICRO_ALGORITHMS } from './options/algorithms.js';
import { helpText } from './options/help.js';
import { parseCommandLine } from './options/parse.js';
import { PROFILES } from './options/profiles.js';
import type { BenchOptions } from './options/types.js';
import { UsageError } from './options/usage-error.js';
import { type BenchResults, serializeResults } from './report/results-file.js';
import { renderSummary } from './report/summary.js';

export type { BenchOptions } from './options/types.js';
export type { BenchResults } from './report/results-file.js';
export { parseCommandLine } from './options/parse.js';

export interface BenchRun {
  /** `<out>/<timestamp>`, holding results.json, summary.md and ghz/. */
  readonly runDir: string;
  readonly results: BenchResults;
  readonly summary: string;
}

/** A path as results.json shows it: relative inside the repository, never a machine-specific absolute one. */
function displayPath(path: string): string {
  const inside = relative(REPO_ROOT, path);
  return inside.startsWith('..') ? `(outside the repository)/${basename(path)}` : inside || '.';
}

/**
 * Runs the benchmarks the options select and writes `<out>/<timestamp>/`. Throws
 * UsageError for options the machine cannot honour (e.g. --server-cores too high).
 */
export async function runBench(options: BenchOptions, log: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<BenchRun> {
  const startedAt = new Date();
  // Everything that can refuse to run is checked before minutes of micro benchmarks.
  const plan = options.macro ? planCores(options.serverCores) : null;
  if (plan !== null) checkCellFilter(options, plan.multiCores, plan.multiWorkers);
  const ghz = options.macro ? locateGhz(log) : null;
  const runDir = createRunDir(options.out, startedAt);
  log(`bench: profile ${options.profile}, results in ${runDir}`);

  let micro: MicroResults | null = null;
  if (options.micro) {
    micro = await runMicro(options.algorithms ?? DEFAULT_MICRO_ALGORITHMS, PROFILES[options.profile].micro, log);
  }
  let macro: MacroResults | null = null;
  if (options.macro && plan !== null && ghz !== null) {
    macro = await runMacro({
      ghz,
      plan,
      algorithms: options.algorithms ?? DEFAULT_MACRO_ALGORITHMS,
      servers: options.servers,
      cells: options.cells,
      durationS: options.durationS,
      warmupS: options.warmupS,
      repetitions: options.repetitions,
      html: options.html,
      runDir,
      log,
      onCleanup: registerCleanup,
    });
  }

  const results: BenchResults = {
    schema: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machineInfo(),
    versions: versions(ghz),
    options: { ...options, out: displayPath(options.out) },
    micro,
    macro: macro === null ? null : { ...macro, ghzPath: displayPath(macro.ghzPath) },
    notes: [],
  };
  const summary = renderSummary(results);
  writeFileSync(join(runDir, 'results.json'), serializeResults(results));
  writeFileSync(join(runDir, 'summary.md'), summary);
  updateLatestLink(options.out, basename(runDir));
  if (options.printSummary) process.stdout.write('\n' + summary);
  log(`bench: wrote ${join(runDir, 'summary.md')} and results.json`);
  return { runDir, results, summary };
}

/** A --cells filter that selects nothing is a typo: say so before any work, with the ids. */
function checkCellFilter(options: BenchOptions, multiCores: number, multiWorkers: number): void {
  if (options.cells === null) return;
  const all = buildScenarios(options.algorithms ?? DEFAULT_MACRO_ALGORITHMS, multiCores, multiWorkers);
  if (filterScenarios(all, options.cells).length === 0) {
    throw new UsageError(`--cells ${options.cells.join(',')} matches no cell; the cells are: ${all.map((s) => s.id).join(', ')}`);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, SERVER_NAMES);
    if (parsed.kind === 'help') {
      process.stdout.write(helpText(SERVER_NAMES));
      return 0;
    }
    // An interrupted run still stops the server under test and deletes the keys.
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      process.once(signal, () => {
        runCleanups();
        process.exit(code);
      });
    }
    await runBench(parsed.options);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`bench: ${error.message}\nRun with --help for the options.\n`);
      return 2;
    }
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) process.exitCode = await main(process.argv.slice(2));
