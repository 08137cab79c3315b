/**
 * Point 1 of the load sections: each server's saturated requests/s on one core under
 * h2load, a load generator that needs far less CPU per call than ghz, with ghz against
 * the same server process in the same rounds for comparison, and which side saturated.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { median } from '../common/stats.js';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { CONTENDED_SHARE, STOLEN_SHARE, cpuSnapshot, runCpu } from '../harness/contention.js';
import { interleavedOrder } from '../macro/column.js';
import { encodeGenerateJwtRequest, grpcFrame } from '../kit/grpc-body.js';
import { type H2loadCall, h2loadArgs, parseH2loadOutput } from './h2load.js';
import { H2LOAD_INSTALL, findH2load } from '../kit/h2load.js';
import { type LoadContext, type LoadServer, type LoadServerName, startLoadServer } from './load-servers.js';
import { statusErrors } from './ok-count.js';
import type { GeneratorFigures, GeneratorRound, H2loadCell, H2loadRatio, H2loadRound, H2loadSection, Saturated } from './results.js';
import { runSampled } from './sampled-run.js';

export const GENERATE_JWT_PATH = '/jwt.services.JwtService/GenerateJwt';
/** Busy share from which a side counts as saturated (as the macro tables' ⚑). */
export const SATURATED_SHARE = 0.9;
/** Calls in flight: 5 connections x 50 streams, as ghz's 5 x 250 cell, so that neither generator is short of work. */
const CONNECTIONS = 5;
const STREAMS = 50;

export interface H2loadSectionOptions {
  readonly algorithms: readonly string[];
  readonly servers: readonly LoadServerName[];
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
}

/** Which side saturated: the server when it was ≥ 90 % busy, else the generator when it was, else neither. */
export function saturatedSide(serverCpu: number, generatorCpu: number | null): Saturated {
  if (serverCpu >= SATURATED_SHARE) return 'server';
  if (generatorCpu !== null && generatorCpu >= SATURATED_SHARE) return 'generator';
  return 'neither';
}

export async function runH2loadSection(ctx: LoadContext, options: H2loadSectionOptions): Promise<H2loadSection> {
  const { serverCpus, loadCpus } = ctx.plan.single;
  const threads = Math.max(1, loadCpus.length);
  const settings = {
    threads,
    connections: Math.max(CONNECTIONS, threads),
    streamsPerConnection: STREAMS,
    ghzConnections: CONNECTIONS,
    ghzConcurrency: CONNECTIONS * STREAMS,
    durationS: options.durationS,
    warmupS: options.warmupS,
    rounds: options.rounds,
    serverCpus,
    loadCpus,
  };
  const h2load = findH2load();
  if (h2load === null)
    return {
      skipped: `h2load not found (\`${H2LOAD_INSTALL}\`; \`npm run tools\` installs it where it can)`,
      settings,
      cells: [],
      ratios: [],
    };
  const cells: H2loadCell[] = [];
  for (const algorithm of options.algorithms) {
    cells.push(...(await runAlgorithm(ctx, h2load, algorithm, options, settings)));
  }
  return { skipped: null, settings, cells, ratios: options.algorithms.map((a) => ratioOf(a, cells)) };
}

interface Running {
  readonly name: LoadServerName;
  server: LoadServer | null;
  readonly rounds: H2loadRound[];
  error: string | null;
}

async function runAlgorithm(
  ctx: LoadContext,
  h2load: string,
  algorithm: string,
  options: H2loadSectionOptions,
  settings: H2loadSection['settings'],
): Promise<H2loadCell[]> {
  const bodyFile = join(ctx.scratchDir, `generate-${algorithm}.grpc`);
  writeFileSync(bodyFile, grpcFrame(encodeGenerateJwtRequest(algorithm)));
  const call = (port: number, durationS: number): H2loadCall => ({
    port,
    path: GENERATE_JWT_PATH,
    bodyFile,
    threads: settings.threads,
    connections: settings.connections,
    streams: settings.streamsPerConnection,
    durationS,
  });
  const running: Running[] = options.servers.map((name) => ({ name, server: null, rounds: [], error: null }));
  try {
    for (const entry of running) {
      try {
        entry.server = await startLoadServer(ctx, entry.name, true);
        ctx.onServers(running.flatMap((e) => (e.server === null ? [] : [e.server.process])));
        if (options.warmupS > 0)
          await runSampled(
            ctx.plan,
            settings.loadCpus,
            h2load,
            h2loadArgs(call(entry.server.process.port, options.warmupS)),
            options.warmupS,
          );
        entry.server.process.pause();
      } catch (error) {
        entry.error = (error as Error).message;
      }
    }
    for (const { item: entry, round } of interleavedOrder(running, options.rounds)) {
      if (entry.server === null || entry.error !== null) continue;
      ctx.log(`  h2load ${algorithm} ${entry.name} round ${round}/${options.rounds}`);
      const process = entry.server.process;
      try {
        process.resume();
        const h2 = await measureH2load(
          ctx,
          h2load,
          entry.server,
          call(process.port, options.durationS),
          settings.loadCpus,
          options.durationS,
        );
        const ghz = await measureGhz(ctx, entry.server, algorithm, settings, options.durationS);
        entry.rounds.push({ round, h2load: h2, ghz });
      } catch (error) {
        entry.error = (error as Error).message;
      } finally {
        process.pause();
      }
    }
  } finally {
    await Promise.all(running.map((e) => e.server?.process.stop()));
    ctx.onServers([]);
    rmSync(bodyFile, { force: true });
  }
  return running.map((e) => ({
    server: e.name,
    algorithm,
    rounds: e.rounds,
    h2load: figures(
      e.rounds.map((r) => r.h2load),
      `h2load/${algorithm}/${e.name}`,
    ),
    ghz: figures(
      e.rounds.map((r) => r.ghz),
      `h2load-ghz/${algorithm}/${e.name}`,
    ),
    error: e.error,
  }));
}

/** One h2load run with the server's call counts and CPU time around it. */
async function measureH2load(
  ctx: LoadContext,
  h2load: string,
  server: LoadServer,
  call: H2loadCall,
  loadCpus: readonly number[],
  durationS: number,
): Promise<GeneratorRound> {
  const counter = server.counter as NonNullable<LoadServer['counter']>;
  const countsBefore = await counter();
  const before = cpuSnapshot(server.process.pid);
  const run = await runSampled(ctx.plan, loadCpus, h2load, h2loadArgs(call), durationS);
  const cpu = runCpu(before, cpuSnapshot(server.process.pid), benchmarkCpus(ctx), ctx.plan.single.serverCpus);
  const serverCpuS = cpu.serverCpuSeconds;
  const countsAfter = await counter();
  if (run.code !== 0) throw new Error(`h2load exited with ${run.code}: ${(run.stdout + run.stderr).trim().slice(-2000)}`);
  const summary = parseH2loadOutput(run.stdout);
  const grpcErrors = statusErrors(countsBefore, countsAfter, summary.status2xx);
  const errors = grpcErrors + summary.failed + summary.errored + summary.timeout;
  const ok = Math.max(0, summary.status2xx - grpcErrors);
  return {
    requestsPerS: summary.finishedS > 0 ? ok / summary.finishedS : Number.NaN,
    errors,
    serverCpu: serverCpuS / run.wallS,
    generatorCpu: run.loadCpuUtilization,
    // The server's OK count covers the whole process run, as its CPU time does.
    cpuPerCallUs: countsAfter.ok > countsBefore.ok ? (serverCpuS / (countsAfter.ok - countsBefore.ok)) * 1e6 : Number.NaN,
    foreignCpuShare: cpu.foreignCpuShare,
    stealShare: cpu.stealShare,
  };
}

/** One ghz run (5 connections, 250 in flight) against the same server, with its CPU time around it. */
async function measureGhz(
  ctx: LoadContext,
  server: LoadServer,
  algorithm: string,
  settings: H2loadSection['settings'],
  durationS: number,
): Promise<GeneratorRound> {
  const output = join(ctx.scratchDir, `h2load-ghz-${server.name}.json`);
  const before = cpuSnapshot(server.process.pid);
  try {
    const run = await runGhz(
      ctx.ghz,
      {
        method: 'GenerateJwt',
        data: { algorithm },
        connections: settings.ghzConnections,
        concurrency: settings.ghzConcurrency,
        durationS,
        cpus: Math.max(1, settings.loadCpus.length),
        port: server.process.port,
        output,
        name: `${server.name} h2load-comparison`,
      },
      ctx.plan,
      settings.loadCpus,
    );
    const after = cpuSnapshot(server.process.pid);
    const cpu = runCpu(before, after, benchmarkCpus(ctx), ctx.plan.single.serverCpus);
    const serverCpuS = cpu.serverCpuSeconds;
    const wallS = (after.at - before.at) / 1000;
    const ghz = summarizeGhzReport(run.report);
    return {
      requestsPerS: ghz.rpsOk,
      errors: ghz.count - ghz.okCount,
      serverCpu: serverCpuS / wallS,
      generatorCpu: run.loadCpuUtilization,
      cpuPerCallUs: ghz.okCount > 0 ? (serverCpuS / ghz.okCount) * 1e6 : Number.NaN,
      foreignCpuShare: cpu.foreignCpuShare,
      stealShare: cpu.stealShare,
    };
  } finally {
    rmSync(output, { force: true });
  }
}

/** The server's CPUs and the generator's, as the macro rounds count them. */
export function benchmarkCpus(ctx: LoadContext): number[] {
  const { serverCpus, loadCpus } = ctx.plan.single;
  return [...serverCpus, ...loadCpus.filter((c) => !serverCpus.includes(c))];
}

/** Whether other processes (> 5 % of the CPUs) or the hypervisor (> 10 % steal) disturbed a run, as the macro marks ⊘ and ◐. */
export function disturbed(round: Pick<GeneratorRound, 'foreignCpuShare' | 'stealShare'>): boolean {
  return round.foreignCpuShare > CONTENDED_SHARE || round.stealShare > STOLEN_SHARE;
}

function finite(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v));
}

/** A generator's figures over the rounds; null without a round. */
export function figures(rounds: readonly GeneratorRound[], key: string): GeneratorFigures | null {
  const rps = finite(rounds.map((r) => r.requestsPerS));
  if (rps.length === 0) return null;
  const serverCpu = median(rounds.map((r) => r.serverCpu));
  const generator = finite(rounds.map((r) => r.generatorCpu ?? Number.NaN));
  const generatorCpu = generator.length === 0 ? null : median(generator);
  const cpu = finite(rounds.map((r) => r.cpuPerCallUs));
  return {
    requestsPerS: bootstrapMedian(rps, seedFor(`${key}/rps`)),
    serverCpu,
    generatorCpu,
    cpuPerCallUs: cpu.length === 0 ? Number.NaN : median(cpu),
    saturated: saturatedSide(serverCpu, generatorCpu),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    disturbedRounds: rounds.filter(disturbed).length,
  };
}

/** Per-round ratios a / b of paired rounds (same round number), as a median with its interval. */
export function pairedRatio(
  a: readonly { round: number; value: number }[],
  b: readonly { round: number; value: number }[],
  key: string,
): MedianInterval | null {
  const ratios: number[] = [];
  for (const x of a) {
    const y = b.find((r) => r.round === x.round);
    if (y !== undefined && Number.isFinite(x.value / y.value) && y.value > 0) ratios.push(x.value / y.value);
  }
  return ratios.length === 0 ? null : bootstrapMedian(ratios, seedFor(key));
}

function ratioOf(algorithm: string, cells: readonly H2loadCell[]): H2loadRatio {
  const ours = cells.find((c) => c.algorithm === algorithm && c.server === 'jwt-grpc');
  const go = cells.find((c) => c.algorithm === algorithm && c.server === 'go');
  if (ours === undefined || go === undefined)
    return { algorithm, h2loadRequestsPerS: null, ghzRequestsPerS: null, h2loadCallsPerCpuSecond: null };
  const pick = (cell: H2loadCell, f: (r: H2loadRound) => number) => cell.rounds.map((r) => ({ round: r.round, value: f(r) }));
  return {
    algorithm,
    h2loadRequestsPerS: pairedRatio(
      pick(ours, (r) => r.h2load.requestsPerS),
      pick(go, (r) => r.h2load.requestsPerS),
      `h2load/${algorithm}/ours-go/rps`,
    ),
    ghzRequestsPerS: pairedRatio(
      pick(ours, (r) => r.ghz.requestsPerS),
      pick(go, (r) => r.ghz.requestsPerS),
      `h2load/${algorithm}/ours-go/ghz-rps`,
    ),
    h2loadCallsPerCpuSecond: pairedRatio(
      pick(ours, (r) => 1 / r.h2load.cpuPerCallUs),
      pick(go, (r) => 1 / r.h2load.cpuPerCallUs),
      `h2load/${algorithm}/ours-go/cpu`,
    ),
  };
}
