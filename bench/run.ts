/**
 * The benchmark harness: `npm run bench [-- options]` (see `--help` and bench/README.md).
 * Programmatic use: `runBench(options)`; this file runs the CLI only when it is the
 * entry point.
 */
import { writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../src/base/package-root.js';
import { registerCleanup } from './kit/cleanup.js';
import { machineInfo, versions } from './common/machine.js';
import { UsageError, runProgram } from './kit/program.js';
import { createRunDir, updateLatestLink } from './common/results-dir.js';
import { GO_TOOLS, ensureGoTool } from './kit/tools.js';
import { planCores } from './harness/cores.js';
import type { MacroResults } from './macro/results.js';
import { resolveRef } from './macro/baseline.js';
import { runMacro } from './macro/run.js';
import { NO_LOAD, runLoad } from './load/run.js';
import { type MultiGroup, buildScenarios, filterScenarios } from './macro/scenarios.js';
import { SERVER_NAMES } from './macro/servers.js';
import type { MicroResults } from './micro/results.js';
import { runMicro } from './micro/run.js';
import { DEFAULT_MACRO_ALGORITHMS, DEFAULT_MICRO_ALGORITHMS } from './options/algorithms.js';
import { helpText } from './options/help.js';
import { parseCommandLine } from './options/parse.js';
import { PROFILES } from './options/profiles.js';
import type { BenchOptions } from './options/types.js';
import { type BenchResults, serializeResults } from './report/results-file.js';
import { plainVerdict } from './report/short-verdict.js';
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
  const inside = relative(PACKAGE_ROOT, path);
  return inside.startsWith('..') ? `(outside the repository)/${basename(path)}` : inside || '.';
}

/**
 * Runs the benchmarks the options select and writes `<out>/<timestamp>/`. Throws
 * UsageError for options the machine cannot honour (e.g. --server-cores too high).
 */
export async function runBench(
  options: BenchOptions,
  log: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): Promise<BenchRun> {
  const startedAt = new Date();
  // Everything that can refuse to run is checked before minutes of micro benchmarks.
  const anyLoad =
    options.load.h2load ||
    options.load.openLoop ||
    options.load.fixedLoad ||
    options.load.warmupSweep ||
    options.load.rest ||
    options.load.startup;
  const plan = options.macro || anyLoad ? planCores(options.serverCores) : null;
  if (plan !== null && options.macro) checkScenarioFilter(options, plan.multi);
  if (plan !== null && options.macro && options.baselineRef !== null) resolveRef(options.baselineRef);
  const ghz = options.macro || anyLoad ? ensureGoTool(GO_TOOLS.ghz, log) : null;
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
      scope: options.scope,
      serverCoresGiven: options.serverCores !== null,
      durationS: options.durationS,
      warmupS: options.warmupS,
      rounds: options.rounds,
      html: options.html,
      runDir,
      log,
      onCleanup: registerCleanup,
      baselineRef: options.baselineRef,
      jwksThroughput: options.jwksThroughput,
      revokeThroughput: options.revokeThroughput,
      keyBackends: options.keyBackends,
    });
  }
  const profile = PROFILES[options.profile];
  const load =
    anyLoad && plan !== null && ghz !== null
      ? await runLoad({
          selection: options.load,
          ghz,
          plan,
          algorithms: options.algorithms ?? profile.load.algorithms,
          durationS: options.durationS,
          warmupS: options.warmupS,
          rounds: options.rounds,
          // --rounds below the profile's also shortens the open loop (each rate is a short cell of its own).
          openLoopRounds: Math.min(options.rounds, profile.load.openLoopRounds),
          warmupStarts: profile.load.warmupStarts,
          log,
          onCleanup: registerCleanup,
        })
      : NO_LOAD;

  const notes: string[] = [];
  const results: BenchResults = {
    schema: 2,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machineInfo(),
    versions: versions(ghz),
    options: { ...options, out: displayPath(options.out) },
    micro,
    macro: macro === null ? null : { ...macro, ghzPath: displayPath(macro.ghzPath) },
    ...load,
    notes,
  };
  const summary = renderSummary(results);
  writeFileSync(join(runDir, 'results.json'), serializeResults(results));
  writeFileSync(join(runDir, 'summary.md'), summary);
  // After results.json and summary.md are on disk: a chart that fails must not cost the run,
  // nor a missing charting library (vega is a devDependency), hence the import here.
  let reportLine = 'bench: report.html failed (see above); the summary holds every figure';
  try {
    const { writeReport } = await import('./report/write-report.js');
    const { charts, reportFile } = await writeReport(runDir, results, summary, log);
    reportLine = `bench: report with ${charts.length} chart(s): ${resolve(reportFile)}`;
  } catch (error) {
    log(`bench: report.html failed, the results are kept: ${(error as Error).message}`);
  }
  updateLatestLink(options.out, basename(runDir));
  if (options.printSummary) process.stdout.write('\n' + summary);
  // The verdict again, last: the summary above it is long, and this is what a reader looks for.
  for (const line of plainVerdict(results).split('\n')) log(`bench: ${line}`);
  log(`bench: wrote ${resolve(runDir, 'summary.md')} and results.json`);
  log(reportLine);
  return { runDir, results, summary };
}

/** A --cells filter that selects no scenario is a typo: say so before any work, with the scenario ids. */
function checkScenarioFilter(options: BenchOptions, multi: readonly MultiGroup[]): void {
  if (options.cells === null) return;
  const all = buildScenarios(options.algorithms ?? DEFAULT_MACRO_ALGORITHMS, multi);
  if (filterScenarios(all, options.cells).length === 0) {
    throw new UsageError(
      `--cells ${options.cells.join(',')} matches no scenario id; the scenario ids are: ${all.map((s) => s.id).join(', ')}`,
    );
  }
}

await runProgram({
  name: 'bench',
  url: import.meta.url,
  help: () => helpText(SERVER_NAMES),
  parse: (argv) => parseCommandLine(argv, SERVER_NAMES),
  run: async (options) => {
    await runBench(options);
    return 0;
  },
});
