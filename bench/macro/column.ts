import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUBJECTS_FILE } from '../kit/paths.js';
import type { Progress } from '../common/progress.js';
import type { GhzCall } from '../ghz/ghz-args.js';
import { redactToken, summarizeGhzReport, withoutDetails } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { renderHtmlReport } from '../ghz/html-report.js';
import { type RunCpu, cpuSnapshot, runCpu } from '../harness/contention.js';
import type { CorePlan, CpuSplit } from '../harness/cores.js';
import type { LaunchedProcess, ServerProcess } from '../kit/launcher.js';
import { type SpeedProbes, largestDeviation } from '../harness/probe.js';
import { cpuSeconds, treePeakRssBytes } from '../kit/proc.js';
import { aggregateRounds, cellFlags, roundFlags } from './aggregate.js';
import { fetchToken, signToken } from './fetch-token.js';
import type { CellFlag, CellResult, RoundResult } from './results.js';
import type { Scenario } from './scenarios.js';
import { type ServerSpec, startBenchServer } from './servers.js';
import { discoveryPort, startBackgroundLoad } from './background-load.js';
import { NO_ASSETS, type RowAssets } from './row-assets.js';

/** What every column of a run shares. */
export interface ColumnContext {
  readonly ghz: string;
  readonly plan: CorePlan;
  readonly keysFile: string;
  readonly runDir: string;
  /** Where ghz's full reports go before they are trimmed (they hold every call). */
  readonly scratchDir: string;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly html: boolean;
  readonly progress: Progress;
  readonly probes: SpeedProbes;
  /** performance.now() at the start of the run: rounds are timed from it. */
  readonly startedAt: number;
  /** Told about the servers started for a column, so that an interrupted run can stop them. */
  readonly onServers: (servers: readonly ServerProcess[]) => void;
  readonly log: (line: string) => void;
  /** What the run made for the rows that need it (certificates, the OTLP sink, h2load); absent: nothing. */
  readonly assets?: RowAssets;
  /** Called before each round's first measurement, every server of the column paused (the ES256 floor's reading). */
  readonly beforeRound?: (scenario: Scenario, round: number) => void;
}

/** The CPUs of a scenario: the 1-core split, or the "N cores" split of its N and workers. */
export function splitFor(plan: CorePlan, scenario: Scenario): CpuSplit {
  if (scenario.group === 'single') return plan.single;
  const split = plan.multi.find((m) => m.cores === scenario.serverCores && m.workers === scenario.workers);
  if (split === undefined) throw new Error(`no CPU split for ${scenario.id}`);
  return split;
}

/** One server of a column while the column runs. */
interface ColumnServer {
  readonly server: ServerSpec;
  running: ServerProcess | null;
  /** The request of every call (the VerifyJwt token comes from this server). */
  data: Record<string, string>;
  /** The metadata of every call (the protected cells' bearer token). */
  metadata: Record<string, string> | undefined;
  readonly rounds: RoundResult[];
  /** Index in the column's probe list of the probe taken just before each round. */
  readonly probeBefore: number[];
  htmlReport: string | null;
  readonly flags: CellFlag[];
  error: string | null;
}

/**
 * One column: every server of a scenario, each started once, warmed up once, then
 * measured in rounds. Round r measures every server once, in an order rotated each round;
 * the servers not being measured are paused (SIGSTOP: no timer, no GC runs beside the
 * measured one). Before each measurement the speed probe times every server CPU.
 *
 * Why not a fresh server per round: start-up and warm-up would cost more than the rounds
 * themselves at 10 rounds, and the rounds of one long-lived process are what a deployed
 * server is; its state does carry over between rounds, so start-to-start variation
 * shows across scenarios (each starts its servers afresh), not within one interval.
 * A server that fails is dropped from the later rounds and the failure recorded in its
 * cell, not thrown: one broken server must not cost the others' figures.
 */
export async function runColumn(ctx: ColumnContext, scenario: Scenario, servers: readonly ServerSpec[]): Promise<CellResult[]> {
  const split = splitFor(ctx.plan, scenario);
  const column: ColumnServer[] = servers.map((server) => ({
    server,
    running: null,
    data: {},
    metadata: undefined,
    rounds: [],
    probeBefore: [],
    htmlReport: null,
    flags: [],
    error: null,
  }));
  const probes: number[][] = [];
  const probe = async (): Promise<number> => probes.push(await ctx.probes.take(split.serverCpus)) - 1;
  try {
    for (const entry of column) {
      await startAndWarm(ctx, scenario, split, entry);
      ctx.onServers(column.flatMap((e) => (e.running === null ? [] : [e.running])));
    }
    for (const { item: entry, round, opensRound } of interleavedOrder(column, ctx.rounds)) {
      if (opensRound) ctx.beforeRound?.(scenario, round);
      if (entry.error !== null) {
        ctx.progress.skip(1);
        continue;
      }
      ctx.progress.start({ server: entry.server.name, scenario: scenario.id, round, rounds: ctx.rounds });
      entry.probeBefore.push(await probe());
      await measureRound(ctx, scenario, split, entry, round);
      ctx.progress.finish();
    }
    await probe(); // the "after" of the column's last measurement
    return column.map((entry) => cellOf(scenario, entry, probes));
  } finally {
    await Promise.all(column.map((entry) => entry.running?.stop()));
    ctx.onServers([]);
  }
}

/** Starts a server on the scenario's CPUs, fetches its token, warms it up and pauses it. */
async function startAndWarm(ctx: ColumnContext, scenario: Scenario, split: CpuSplit, entry: ColumnServer): Promise<void> {
  try {
    const launch = entry.server.launch({
      keysFile: ctx.keysFile,
      subjectsFile: SUBJECTS_FILE,
      workers: scenario.workers,
      assets: ctx.assets ?? NO_ASSETS,
    });
    entry.running = await startBenchServer(entry.server, launch, ctx.plan, split.serverCpus);
    await prepareRequest(ctx, scenario, entry);
    if (ctx.warmupS > 0) {
      const load = backgroundLoad(ctx, split, entry, ctx.warmupS);
      try {
        await runGhz(
          ctx.ghz,
          ghzCall(ctx, scenario, split, entry, ctx.warmupS, join(ctx.scratchDir, 'warmup.json')),
          ctx.plan,
          split.loadCpus,
        );
      } finally {
        load?.kill();
      }
    }
    entry.running.pause();
  } catch (caught) {
    entry.error = (caught as Error).message;
    entry.flags.push('failed');
  }
}

/** The request (and metadata) every call of a server's cell sends. */
async function prepareRequest(ctx: ColumnContext, scenario: Scenario, entry: ColumnServer): Promise<void> {
  switch (scenario.method) {
    case 'GenerateJwt':
      entry.data = { algorithm: scenario.algorithm };
      return;
    case 'VerifyJwt':
      entry.data = { jwt: await fetchToken((entry.running as ServerProcess).port, scenario.algorithm) };
      return;
    case 'Hello':
      entry.data = { name: 'bench' };
      entry.metadata = { authorization: `Bearer ${await signToken(ctx.keysFile, scenario.algorithm)}` };
      return;
  }
}

function ghzCall(ctx: ColumnContext, scenario: Scenario, split: CpuSplit, entry: ColumnServer, durationS: number, output: string): GhzCall {
  const tls = entry.server.needs?.includes('mtls') === true ? ctx.assets?.tls?.client : undefined;
  return {
    ...(tls === undefined ? {} : { tls }),
    method: scenario.method,
    data: entry.data,
    ...(entry.metadata === undefined ? {} : { metadata: entry.metadata }),
    connections: scenario.connections,
    concurrency: scenario.concurrency,
    durationS,
    cpus: split.loadCpus.length,
    port: (entry.running as ServerProcess).port,
    output,
    name: `${entry.server.name} ${scenario.id}`,
  };
}

/**
 * The row's background load (h2load GETting its JWK Set), started now on the load CPUs for
 * about `durationS`, or null for a row without one. Its CPU is ghz's side's (the load
 * CPUs), never the server's; the server's answers to it are the server's.
 */
function backgroundLoad(ctx: ColumnContext, split: CpuSplit, entry: ColumnServer, durationS: number): LaunchedProcess | null {
  const load = entry.server.backgroundLoad;
  if (load === undefined) return null;
  const h2load = ctx.assets?.h2load ?? null;
  const port = discoveryPort((entry.running as ServerProcess).stdout);
  if (h2load === null) throw new Error(`${entry.server.name}: h2load was not prepared`);
  if (port === null) throw new Error(`${entry.server.name}: its start lines name no discovery port`);
  return startBackgroundLoad(h2load, load, port, durationS, ctx.plan, split.loadCpus);
}

/** CPU-seconds so far of the run's long-lived load-side processes (the OTLP sink). */
function loadSideCpuSeconds(ctx: ColumnContext): number {
  return (ctx.assets?.loadSidePids ?? []).reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
}

/** The run's figures with the load side's own processes taken out of "other processes". */
export function withoutLoadSide(cpu: RunCpu, loadSideSeconds: number, capacitySeconds: number): RunCpu {
  if (loadSideSeconds <= 0 || capacitySeconds <= 0) return cpu;
  return { ...cpu, foreignCpuShare: Math.max(0, cpu.foreignCpuShare - loadSideSeconds / capacitySeconds) };
}

async function endLoad(load: LaunchedProcess): Promise<void> {
  load.kill();
  await load.exited;
}

/**
 * The order of a column's measurements: round r measures every item once, starting one
 * item further along than round r - 1, so that no server always runs first or always
 * right after the same neighbour. `opensRound`: the round's first measurement.
 */
export function interleavedOrder<T>(items: readonly T[], rounds: number): { item: T; round: number; opensRound: boolean }[] {
  const order: { item: T; round: number; opensRound: boolean }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const shift = items.length === 0 ? 0 : (round - 1) % items.length;
    [...items.slice(shift), ...items.slice(0, shift)].forEach((item, i) => order.push({ item, round, opensRound: i === 0 }));
  }
  return order;
}

/** One measurement: resume the server, one ghz run with CPU counters around it, pause it again. */
async function measureRound(ctx: ColumnContext, scenario: Scenario, split: CpuSplit, entry: ColumnServer, round: number): Promise<void> {
  const running = entry.running as ServerProcess;
  const rawFile = join(ctx.scratchDir, `${entry.server.name}-${scenario.id}-${round}.json`);
  const cpus = [...split.serverCpus, ...split.loadCpus.filter((c) => !split.serverCpus.includes(c))];
  let load: LaunchedProcess | null = null;
  try {
    running.resume();
    load = backgroundLoad(ctx, split, entry, ctx.durationS);
    const startedAtMs = performance.now() - ctx.startedAt;
    const sideBefore = loadSideCpuSeconds(ctx);
    const before = cpuSnapshot(running.pid);
    const run = await runGhz(ctx.ghz, ghzCall(ctx, scenario, split, entry, ctx.durationS, rawFile), ctx.plan, split.loadCpus);
    // Ended (and reaped) before the reading, so that its CPU counts as the load side's, like ghz's, not as another process's.
    if (load !== null) await endLoad(load);
    const after = cpuSnapshot(running.pid);
    const cpu = withoutLoadSide(
      runCpu(before, after, cpus, split.serverCpus),
      loadSideCpuSeconds(ctx) - sideBefore,
      ((after.at - before.at) / 1000) * cpus.length,
    );
    running.pause();
    const ghz = summarizeGhzReport(run.report);
    const report = redactToken(run.report);
    const reportFile = join('ghz', scenario.id, `${entry.server.name}-round${round}.json`);
    writeFileSync(join(ctx.runDir, reportFile), JSON.stringify(withoutDetails(report), null, 2));
    if (ctx.html && round === 1)
      entry.htmlReport = htmlReport(ctx, scenario, entry.server.name, report !== run.report ? report : null, rawFile);
    const measured = {
      round,
      startedAtMs,
      ghz,
      serverCpuSeconds: cpu.serverCpuSeconds,
      serverCpuUsPerRequest: ghz.count > 0 ? (cpu.serverCpuSeconds / ghz.count) * 1e6 : Number.NaN,
      serverCpuUtilization: ghz.totalSeconds > 0 ? cpu.serverCpuSeconds / (ghz.totalSeconds * scenario.serverCores) : Number.NaN,
      loadCpuUtilization: run.loadCpuUtilization,
      ghzCpuSeconds: cpu.ghzCpuSeconds,
      foreignCpuShare: cpu.foreignCpuShare,
      serverStealShare: cpu.serverStealShare,
      stealShare: cpu.stealShare,
      probeMs: { before: [], after: [] },
      probeDeviation: null,
      reportFile,
    };
    entry.rounds.push({ ...measured, flags: roundFlags(measured) });
    if (running.exit !== undefined) {
      entry.flags.push('server-exited');
      entry.error = `${entry.server.name} exited during the cell:\n${running.stderr.slice(-4096).trim()}`;
    }
  } catch (caught) {
    load?.kill();
    running.pause();
    entry.error = (caught as Error).message;
    entry.flags.push('failed');
  } finally {
    rmSync(rawFile, { force: true });
  }
}

/** Renders ghz's HTML page of the first round; returns its path in the run directory, or null. */
function htmlReport(ctx: ColumnContext, scenario: Scenario, server: string, redacted: object | null, rawFile: string): string | null {
  if (redacted !== null) writeFileSync(rawFile, JSON.stringify(redacted)); // the page embeds the request
  const htmlFile = join('ghz', scenario.id, `${server}.html`);
  const failure = renderHtmlReport(rawFile, join(ctx.runDir, htmlFile));
  if (failure === null) return htmlFile;
  ctx.log(`  ! ${server} ${scenario.id}: no HTML report: ${failure}`);
  return null;
}

/**
 * The cell of one server: its rounds with the probes around each (the probe before a
 * measurement, and the next one the column took, before another server's measurement
 * or at the end), and its peak memory over the whole column.
 */
function cellOf(scenario: Scenario, entry: ColumnServer, probes: readonly (readonly number[])[]): CellResult {
  const rounds = entry.rounds.map((round, i) => {
    const before = entry.probeBefore[i] as number;
    return { ...round, probeMs: { before: probes[before] ?? [], after: probes[before + 1] ?? [] } };
  });
  return {
    server: entry.server.name,
    scenario: scenario.id,
    rounds,
    aggregate: aggregateRounds(rounds),
    peakRssBytes: entry.running === null ? null : treePeakRssBytes(entry.running.pid),
    htmlReport: entry.htmlReport,
    flags: cellFlags(rounds, entry.flags),
    error: entry.error,
  };
}

/**
 * The cell once the run's probe baselines are known (each CPU's median probe over the
 * whole run): every round gets its probe deviation and, past the threshold, the
 * `slowed` mark; flags and aggregate are recomputed with them.
 */
export function withProbeDeviations(cell: CellResult, cpus: readonly number[], baselines: ReadonlyMap<number, number>): CellResult {
  const rounds = cell.rounds.map((round) => {
    const probeDeviation = largestDeviation(cpus, [round.probeMs.before, round.probeMs.after], baselines);
    const updated = { ...round, probeDeviation };
    return { ...updated, flags: roundFlags(updated) };
  });
  const kept = cell.flags.filter((f) => f === 'failed' || f === 'server-exited');
  return { ...cell, rounds, aggregate: aggregateRounds(rounds), flags: cellFlags(rounds, kept) };
}
