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

/**
 * One cell: start the server on its cores, warm it up, measure `repetitions` ghz runs,
 * read its peak memory, stop it. A fresh server per cell keeps cells independent (no
 * heap or JIT state carried over) and makes its peak RSS belong to this cell alone.
 * Failures are recorded in the cell, not thrown: one broken server must not cost the
 * figures of the others.
 */
export async function runCell(ctx: CellContext, server: ServerSpec, scenario: Scenario): Promise<CellResult> {
  const split = ctx.plan[scenario.group];
  const launch = server.launch({ keysFile: ctx.keysFile, subjectsFile: SUBJECTS_FILE, cores: scenario.workers });
  const pinned = pinnedCommand(ctx.plan, split.serverCpus, launch.command, launch.args);
  const reps: RepetitionResult[] = [];
  let running: RunningServer | null = null;
  let peakRssBytes: number | null = null;
  let htmlReport: string | null = null;
  let error: string | null = null;
  const extraFlags: CellFlag[] = [];
  let stepsDone = 0;
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
    for (let r = 1; r <= ctx.repetitions; r++) {
      ctx.progress.start({ server: server.name, scenario: scenario.id, repetition: r, repetitions: ctx.repetitions });
      const rawFile = join(ctx.scratchDir, `${server.name}-${scenario.id}-${r}.json`);
      const before = cpuSnapshot(running.pid, ctx.plan.allowedCpus);
      const run = await runGhz(ctx.ghz, call(ctx.durationS, rawFile), ctx.plan, split.loadCpus);
      const cpu = runCpu(before, cpuSnapshot(running.pid, ctx.plan.allowedCpus), ctx.plan.allowedCpus.length);
      const serverCpuSeconds = cpu.serverCpuSeconds;
      ctx.progress.finish();
      stepsDone += 1;
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
      reps.push({
        repetition: r,
        ghz,
        serverCpuSeconds,
        serverCpuUsPerRequest: ghz.count > 0 ? (serverCpuSeconds / ghz.count) * 1e6 : Number.NaN,
        serverCpuUtilization: ghz.totalSeconds > 0 ? serverCpuSeconds / (ghz.totalSeconds * scenario.serverCores) : Number.NaN,
        loadCpuUtilization: run.loadCpuUtilization,
        ghzCpuSeconds: cpu.ghzCpuSeconds,
        foreignCpuShare: cpu.foreignCpuShare,
        reportFile,
      });
    }
    // Read before stopping: after the exit /proc no longer has the process.
    peakRssBytes = treePeakRssBytes(running.pid);
    if (running.hasExited()) {
      extraFlags.push('server-exited');
      error = `${server.name} exited during the cell:\n${running.stderrTail().trim()}`;
    }
  } catch (caught) {
    error = (caught as Error).message;
    extraFlags.push('failed');
    ctx.progress.skip(ctx.repetitions - stepsDone);
  } finally {
    await running?.stop();
    ctx.onServer(null);
  }
  const aggregate = aggregateRepetitions(reps);
  return { server: server.name, scenario: scenario.id, repetitions: reps, aggregate, peakRssBytes, htmlReport, flags: flagsOf(aggregate, extraFlags), error };
}
