import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Progress } from '../common/progress.js';
import { SUBJECTS_FILE } from '../common/paths.js';
import { aggregateRepetitions, flagsOf } from './aggregate.js';
import { type CorePlan, pinnedCommand } from './cores.js';
import type { GhzCall } from './ghz-args.js';
import { redactToken, summarizeGhzReport, withoutDetails } from './ghz-report.js';
import { runGhz } from './ghz-run.js';
import { fetchToken } from './fetch-token.js';
import { renderHtmlReport } from './html-report.js';
import { treePeakRssBytes } from './proc.js';
import { cpuSnapshot, runCpu } from './contention.js';
import type { CellFlag, CellResult, RepetitionResult } from './results.js';
import type { Scenario } from './scenarios.js';
import { type RunningServer, startServer } from './server-process.js';
import type { ServerSpec } from './servers.js';

/** What every cell of a run shares. */
export interface CellContext {
  readonly ghz: string;
  readonly plan: CorePlan;
  readonly keysFile: string;
  readonly runDir: string;
  /** Where ghz's full reports go before they are trimmed (they hold every call). */
  readonly scratchDir: string;
  readonly durationS: number;
  readonly warmupS: number;
  readonly repetitions: number;
  readonly html: boolean;
  readonly progress: Progress;
  /** Told about the server being measured, so that an interrupted run can stop it. */
  readonly onServer: (server: RunningServer | null) => void;
  readonly log: (line: string) => void;
}

/** What one repetition left behind, for its cell. */
interface RepetitionOutcome {
  readonly repetition: RepetitionResult | null;
  readonly peakRssBytes: number | null;
  readonly htmlReport: string | null;
  readonly flags: readonly CellFlag[];
  readonly error: string | null;
}

/**
 * One column: every server of a scenario, repetitions interleaved (repetition 1 of each
 * server, then repetition 2 of each, the order rotated each round). On a machine whose
 * speed drifts over minutes, a server's repetitions then sample the same stretch of
 * time as the others', and the medians, whose ratios are the point of the run, stay
 * comparable. A server that fails is dropped from the column's later rounds; the
 * failure is recorded in its cell, not thrown: one broken server must not cost the
 * figures of the others.
 */
export async function runColumn(ctx: CellContext, scenario: Scenario, servers: readonly ServerSpec[]): Promise<CellResult[]> {
  const outcomes = new Map<string, RepetitionOutcome[]>(servers.map((s) => [s.name, []]));
  for (const { item: server, repetition } of interleavedOrder(servers, ctx.repetitions)) {
    const done = outcomes.get(server.name) as RepetitionOutcome[];
    if (done.some((o) => o.error !== null)) {
      ctx.progress.skip(1);
      continue;
    }
    done.push(await runRepetition(ctx, server, scenario, repetition));
  }
  return servers.map((server) => cellOf(server, scenario, outcomes.get(server.name) as RepetitionOutcome[]));
}

/**
 * The order of a column's runs: round r runs repetition r of every item, starting one
 * item further along than round r - 1, so that no server always runs first (after a
 * cold start or a Go build) or always right after the same neighbour.
 */
export function interleavedOrder<T>(items: readonly T[], repetitions: number): { item: T; repetition: number }[] {
  const order: { item: T; repetition: number }[] = [];
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    const shift = items.length === 0 ? 0 : (repetition - 1) % items.length;
    for (const item of [...items.slice(shift), ...items.slice(0, shift)]) order.push({ item, repetition });
  }
  return order;
}

function cellOf(server: ServerSpec, scenario: Scenario, outcomes: readonly RepetitionOutcome[]): CellResult {
  const reps = outcomes.flatMap((o) => (o.repetition === null ? [] : [o.repetition]));
  const peaks = outcomes.flatMap((o) => (o.peakRssBytes === null ? [] : [o.peakRssBytes]));
  const failure = outcomes.find((o) => o.error !== null);
  const aggregate = aggregateRepetitions(reps);
  return {
    server: server.name,
    scenario: scenario.id,
    repetitions: reps,
    aggregate,
    // Each repetition has its own process: the cell's peak is the highest of theirs.
    peakRssBytes: peaks.length > 0 ? Math.max(...peaks) : null,
    htmlReport: outcomes.find((o) => o.htmlReport !== null)?.htmlReport ?? null,
    flags: flagsOf(aggregate, [...new Set(outcomes.flatMap((o) => o.flags))]),
    error: failure?.error ?? null,
  };
}

/**
 * One repetition: start the server on its cores, warm it up, measure one ghz run, read
 * its peak memory, stop it. A fresh server per repetition keeps repetitions independent
 * (no heap or JIT state carried over) and makes its peak RSS belong to this run alone.
 */
async function runRepetition(ctx: CellContext, server: ServerSpec, scenario: Scenario, r: number): Promise<RepetitionOutcome> {
  const split = ctx.plan[scenario.group];
  const launch = server.launch({ keysFile: ctx.keysFile, subjectsFile: SUBJECTS_FILE, cores: scenario.workers });
  const pinned = pinnedCommand(ctx.plan, split.serverCpus, launch.command, launch.args);
  let running: RunningServer | null = null;
  let repetition: RepetitionResult | null = null;
  let peakRssBytes: number | null = null;
  let htmlReport: string | null = null;
  let error: string | null = null;
  const flags: CellFlag[] = [];
  let measured = false;
  ctx.progress.start({ server: server.name, scenario: scenario.id, repetition: r, repetitions: ctx.repetitions });
  try {
    running = await startServer(server.name, { ...launch, ...pinned }, server.entryFile);
    ctx.onServer(running);
    const data: Record<string, string> = scenario.method === 'VerifyJwt' ? { jwt: await fetchToken(running.port, scenario.algorithm) } : { algorithm: scenario.algorithm };
    const call = (durationS: number, output: string): GhzCall => ({
      method: scenario.method,
      data,
      connections: scenario.connections,
      concurrency: scenario.concurrency,
      durationS,
      cpus: split.loadCpus.length,
      port: (running as RunningServer).port,
      output,
      name: `${server.name} ${scenario.id}`,
    });
    if (ctx.warmupS > 0) await runGhz(ctx.ghz, call(ctx.warmupS, join(ctx.scratchDir, 'warmup.json')), ctx.plan, split.loadCpus);
    const rawFile = join(ctx.scratchDir, `${server.name}-${scenario.id}-${r}.json`);
    const before = cpuSnapshot(running.pid, ctx.plan.allowedCpus);
    const run = await runGhz(ctx.ghz, call(ctx.durationS, rawFile), ctx.plan, split.loadCpus);
    const cpu = runCpu(before, cpuSnapshot(running.pid, ctx.plan.allowedCpus), ctx.plan.allowedCpus.length);
    const serverCpuSeconds = cpu.serverCpuSeconds;
    ctx.progress.finish();
    measured = true;
    const ghz = summarizeGhzReport(run.report);
    const report = redactToken(run.report);
    const reportFile = join('ghz', scenario.id, `${server.name}-rep${r}.json`);
    writeFileSync(join(ctx.runDir, reportFile), JSON.stringify(withoutDetails(report), null, 2));
    if (ctx.html && r === 1) {
      if (report !== run.report) writeFileSync(rawFile, JSON.stringify(report)); // the page embeds the options
      const htmlFile = join('ghz', scenario.id, `${server.name}.html`);
      const failure = renderHtmlReport(rawFile, join(ctx.runDir, htmlFile));
      if (failure === null) htmlReport = htmlFile;
      else ctx.log(`  ! ${server.name} ${scenario.id}: no HTML report: ${failure}`);
    }
    rmSync(rawFile, { force: true });
    repetition = {
      repetition: r,
      ghz,
      serverCpuSeconds,
      serverCpuUsPerRequest: ghz.count > 0 ? (serverCpuSeconds / ghz.count) * 1e6 : Number.NaN,
      serverCpuUtilization: ghz.totalSeconds > 0 ? serverCpuSeconds / (ghz.totalSeconds * scenario.serverCores) : Number.NaN,
      loadCpuUtilization: run.loadCpuUtilization,
      ghzCpuSeconds: cpu.ghzCpuSeconds,
      foreignCpuShare: cpu.foreignCpuShare,
      reportFile,
    };
    // Read before stopping: after the exit /proc no longer has the process.
    peakRssBytes = treePeakRssBytes(running.pid);
    if (running.hasExited()) {
      flags.push('server-exited');
      error = `${server.name} exited during the cell:\n${running.stderrTail().trim()}`;
    }
  } catch (caught) {
    error = (caught as Error).message;
    flags.push('failed');
    if (!measured) ctx.progress.skip(1);
  } finally {
    await running?.stop();
    ctx.onServer(null);
  }
  return { repetition, peakRssBytes, htmlReport, flags, error };
}
