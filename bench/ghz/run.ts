import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Progress } from '../common/progress.js';
import type { BenchAlgorithm } from '../options/algorithms.js';
import { type CellContext, runColumn } from './cell.js';
import { type CorePlan } from './cores.js';
import { goBuild } from './go-build.js';
import { buildHtmlRenderer } from './html-report.js';
import { writeKeysFile } from './keys-file.js';
import type { CellResult, MacroResults, ServerStatus } from './results.js';
import { buildScenarios, filterScenarios, type Scenario } from './scenarios.js';
import type { RunningServer } from './server-process.js';
import { GO_PEER_BINARY, GO_PEER_DIR, SERVERS, type ServerSpec, serves } from './servers.js';

export interface MacroOptions {
  readonly ghz: string;
  readonly plan: CorePlan;
  readonly algorithms: readonly BenchAlgorithm[];
  readonly servers: readonly string[] | null;
  readonly cells: readonly string[] | null;
  readonly durationS: number;
  readonly warmupS: number;
  readonly repetitions: number;
  readonly html: boolean;
  readonly runDir: string;
  readonly log: (line: string) => void;
  /** Registers a cleanup for an interrupted run; returns its unregistration. */
  readonly onCleanup: (cleanup: () => void) => () => void;
}

/**
 * The macro benchmark: every (scenario, server) cell of the matrix with ghz.
 *
 * Cells run scenario by scenario (column by column), and within a column the servers'
 * repetitions are interleaved (see runColumn): a drift of the machine over the run
 * (thermal, a noisy neighbour) then touches the servers of one column alike, and the
 * ratios within a column, the point of the run, stay fair.
 */
export async function runMacro(options: MacroOptions): Promise<MacroResults> {
  const notes = [...options.plan.notes];
  const [load1 = 0] = loadavg();
  if (load1 > 0.5) {
    notes.push(`the machine was not idle at the start (1-minute load average ${load1.toFixed(2)}): cells marked ⊘ shared their CPUs with other work`);
  }
  const selected = SERVERS.filter((s) => options.servers === null || options.servers.includes(s.name));
  const skipped = prepareServers(selected, options.log);
  const scenarios = filterScenarios(buildScenarios(options.algorithms, options.plan.multiCores, options.plan.multiWorkers), options.cells);
  let html = options.html;
  if (html) {
    const renderer = buildHtmlRenderer();
    if (!renderer.ok) {
      notes.push(`HTML reports not produced: ${renderer.reason}`);
      html = false;
    }
  }
  const runnable = selected.filter((s) => !skipped.has(s.name));
  const columns = scenarios
    .map((scenario) => ({ scenario, servers: runnable.filter((s) => serves(s, scenario.group, scenario.method)) }))
    .filter((column) => column.servers.length > 0);
  const cellCount = columns.reduce((sum, column) => sum + column.servers.length, 0);
  if (scenarios.length > 0 && cellCount === 0) notes.push('no (scenario, server) pair to run with this selection');

  const keys = writeKeysFile(options.algorithms);
  const scratchDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bench-ghz-'));
  let current: RunningServer | null = null;
  const unregister = options.onCleanup(() => {
    current?.stop(2000).catch(() => undefined);
    keys.remove();
    rmSync(scratchDir, { recursive: true, force: true });
  });
  const cells: CellResult[] = [];
  try {
    for (const scenario of scenarios) mkdirSync(join(options.runDir, 'ghz', scenario.id), { recursive: true });
    const ctx: CellContext = {
      ghz: options.ghz,
      plan: options.plan,
      keysFile: keys.path,
      runDir: options.runDir,
      scratchDir,
      durationS: options.durationS,
      warmupS: options.warmupS,
      repetitions: options.repetitions,
      html,
      // Each step is a fresh server: start-up (~1 s), warm-up, the measured run.
      progress: new Progress(cellCount * options.repetitions, options.durationS + options.warmupS + 1, options.log),
      onServer: (server) => (current = server),
      log: options.log,
    };
    for (const { scenario, servers } of columns) {
      for (const cell of await runColumn(ctx, scenario, servers)) {
        if (cell.error !== null) options.log(`  ! ${cell.server} ${scenario.id}: ${cell.error.split('\n')[0]}`);
        cells.push(cell);
      }
    }
  } finally {
    unregister();
    keys.remove();
    rmSync(scratchDir, { recursive: true, force: true });
  }
  return {
    settings: { durationS: options.durationS, warmupS: options.warmupS, repetitions: options.repetitions, html },
    ghzPath: options.ghz,
    corePlan: options.plan,
    scenarios: scenarios satisfies Scenario[],
    servers: selected.map((s) => serverStatus(s, skipped.get(s.name) ?? null)),
    cells,
    notes,
  };
}

/** Builds what needs building (the Go peer) and returns the servers that cannot run, with why. */
function prepareServers(servers: readonly ServerSpec[], log: (line: string) => void): Map<string, string> {
  const skipped = new Map<string, string>();
  for (const s of servers) {
    if (s.build === undefined && !existsSync(s.entryFile)) skipped.set(s.name, `${s.entryFile} missing: run \`npm run build\` first`);
  }
  if (servers.some((s) => s.build === 'go-peer')) {
    log('building the Go peer (go build in bench/peers/go)');
    const outcome = goBuild(GO_PEER_DIR, GO_PEER_BINARY, 'the Go peer');
    if (!outcome.ok) {
      for (const s of servers.filter((x) => x.build === 'go-peer')) skipped.set(s.name, outcome.reason);
    }
  }
  return skipped;
}

function serverStatus(server: ServerSpec, skipped: string | null): ServerStatus {
  return { name: server.name, role: server.role, description: server.description, cluster: server.cluster, skipped };
}
