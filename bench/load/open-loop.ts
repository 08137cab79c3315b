/**
 * Point 2 of the load sections: latency at a fixed arrival rate, below saturation. The
 * generator is bench/load/openloop (Go, grpc-go): calls leave on a Poisson schedule
 * whatever the server does, and each call's latency runs from its intended send time, so
 * a queue in the server shows in p99 instead of slowing the sender (coordinated
 * omission). Neither ghz nor h2load can do this: ghz's `--rps` paces workers that each
 * wait for their call's response (its pacer hands ticks over an unbuffered channel, so a
 * slow server delays the schedule and latency is timed from the actual send), and
 * h2load's `-r` is a rate of new connections, not of requests.
 */
import { join } from 'node:path';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { goBuild } from '../kit/go-build.js';
import { repoPath } from '../kit/paths.js';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { median } from '../common/stats.js';
import { interleavedOrder } from '../macro/column.js';
import { encodeGenerateJwtRequest } from '../kit/grpc-body.js';
import { cpuSnapshot, runCpu } from '../harness/contention.js';
import { FIXED_LOAD_FRACTIONS, type ServerCpuRun, cpuPerCallFigure, cpuPerCallRatio, serverBusy } from './fixed-load.js';
import { GENERATE_JWT_PATH, benchmarkCpus, disturbed, pairedRatio } from './h2load-section.js';
import { type LoadContext, type LoadServer, type LoadServerName, startLoadServer } from './load-servers.js';
import type { Capacity, OpenLoopPoint, OpenLoopRatio, OpenLoopSettings } from './results.js';
import { runSampled } from './sampled-run.js';

export const OPEN_LOOP_DIR = repoPath('bench', 'load', 'openloop');
export const OPEN_LOOP_BINARY = repoPath('bench', 'load', 'openloop', 'openloop');

/** Shares of each server's own saturated rate. */
export const FRACTIONS_OF_OWN = [0.25, 0.5, 0.75, 0.9] as const;
/**
 * Shares of Go's saturated rate, offered to both servers: the p99 ratio at each (the
 * headline's at 50 and 80 %), and CPU per call ours / Go at fixed load (fixed-load.ts).
 */
export const FRACTIONS_OF_GO = FIXED_LOAD_FRACTIONS;
/** Rates offered to both servers whatever their capacity: what a user with this load gets. */
export const ABSOLUTE_RPS = [1000, 5000] as const;
/** Connections the generator spreads its calls over (round-robin). */
export const OPEN_LOOP_CONNECTIONS = 4;

/** One run of the generator, as it prints it (bench/load/openloop/main.go, `result`). */
export interface OpenLoopRun {
  readonly sent: number;
  readonly ok: number;
  readonly errors: Readonly<Record<string, number>>;
  readonly elapsedS: number;
  readonly achievedRps: number;
  readonly offeredRps: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  readonly maxSendLagMs: number;
}

/** Builds the generator (Go's build cache makes a rebuild quick); a reason when it cannot. */
export function buildOpenLoop(): string | null {
  const outcome = goBuild(OPEN_LOOP_DIR, OPEN_LOOP_BINARY, 'the open-loop generator (bench/load/openloop)');
  return outcome.ok ? null : outcome.reason;
}

export function openLoopArgs(port: number, algorithm: string, rps: number, durationS: number, connections: number, seed: number): string[] {
  return [
    '--target',
    `127.0.0.1:${port}`,
    '--method',
    GENERATE_JWT_PATH,
    '--body-hex',
    encodeGenerateJwtRequest(algorithm).toString('hex'),
    '--rate',
    String(rps),
    '--duration',
    `${Math.round(durationS * 1000)}ms`,
    '--connections',
    String(connections),
    '--arrivals',
    'poisson',
    '--seed',
    String(seed),
  ];
}

/** A point of the schedule: a rate and what it is a share of. */
export interface RatePoint {
  readonly server: LoadServerName;
  readonly offeredRps: number;
  readonly fractionOfOwnCapacity?: number;
  readonly fractionOfGoCapacity?: number;
}

/**
 * The rates each server is offered, from the saturated rates (`capacity(server)`): shares
 * of its own (`ownFractions`), of Go's, and the absolute ones.
 */
export function ratePoints(
  servers: readonly LoadServerName[],
  capacity: (server: LoadServerName) => number | undefined,
  absolute: readonly number[],
  ownFractions: readonly number[] = FRACTIONS_OF_OWN,
): RatePoint[] {
  const points: RatePoint[] = [];
  const goCapacity = capacity('go');
  for (const server of servers) {
    const own = capacity(server);
    if (own !== undefined) for (const f of ownFractions) points.push({ server, offeredRps: Math.round(own * f), fractionOfOwnCapacity: f });
    if (goCapacity !== undefined)
      for (const f of FRACTIONS_OF_GO) points.push({ server, offeredRps: Math.round(goCapacity * f), fractionOfGoCapacity: f });
    for (const rps of absolute) points.push({ server, offeredRps: rps });
  }
  return points;
}

export interface OpenLoopOptions {
  readonly algorithms: readonly string[];
  readonly servers: readonly LoadServerName[];
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly absoluteRps: readonly number[];
  /** Shares of each server's own saturated rate (FRACTIONS_OF_OWN; [] for the fixed-load points alone). */
  readonly ownFractions: readonly number[];
  /** Saturated requests/s per server and algorithm (the h2load cells'); measured here with ghz where missing. */
  readonly capacities: readonly Capacity[];
}

export interface OpenLoopSectionResult {
  readonly points: OpenLoopPoint[];
  readonly ratios: OpenLoopRatio[];
  readonly settings: OpenLoopSettings;
}

/** One generator run with the server's CPU time around it. */
interface MeasuredRun {
  readonly round: number;
  readonly run: OpenLoopRun;
  readonly generatorCpu: number | null;
  readonly server: ServerCpuRun;
  readonly disturbed: boolean;
}

interface PointRuns {
  readonly point: RatePoint;
  readonly runs: MeasuredRun[];
}

export async function runOpenLoopSection(ctx: LoadContext, options: OpenLoopOptions): Promise<OpenLoopSectionResult> {
  const capacities = [...options.capacities];
  const points: OpenLoopPoint[] = [];
  const ratios: OpenLoopRatio[] = [];
  for (const algorithm of options.algorithms) {
    const servers = new Map<LoadServerName, LoadServer>();
    try {
      for (const name of options.servers) {
        const server = await startLoadServer(ctx, name, false);
        servers.set(name, server);
        ctx.onServers([...servers.values()].map((s) => s.process));
        if (options.warmupS > 0) await runOpenLoop(ctx, server, algorithm, 1000, options.warmupS, 0);
        if (!capacities.some((c) => c.server === name && c.algorithm === algorithm)) {
          capacities.push({
            server: name,
            algorithm,
            requestsPerS: await ghzCapacity(ctx, server, algorithm, options.durationS),
            source: 'ghz',
          });
        }
        server.process.pause();
      }
      const capacity = (server: LoadServerName): number | undefined =>
        capacities.find((c) => c.server === server && c.algorithm === algorithm)?.requestsPerS;
      const schedule = ratePoints(options.servers, capacity, options.absoluteRps, options.ownFractions).map(
        (point): PointRuns => ({ point, runs: [] }),
      );
      for (const { item, round } of interleavedOrder(schedule, options.rounds)) {
        const server = servers.get(item.point.server) as LoadServer;
        ctx.log(`  open loop ${algorithm} ${item.point.server} ${item.point.offeredRps}/s round ${round}/${options.rounds}`);
        server.process.resume();
        try {
          item.runs.push(await measureOpenLoop(ctx, server, algorithm, item.point.offeredRps, options.durationS, round));
        } finally {
          server.process.pause();
        }
      }
      for (const item of schedule) points.push(pointOf(algorithm, item));
      for (const f of FRACTIONS_OF_GO) {
        const ours = schedule.find((s) => s.point.server === 'jwt-grpc' && s.point.fractionOfGoCapacity === f);
        const go = schedule.find((s) => s.point.server === 'go' && s.point.fractionOfGoCapacity === f);
        if (ours === undefined || go === undefined) continue;
        const p99 = (s: PointRuns) => s.runs.filter((r) => r.run.ok > 0).map((r) => ({ round: r.round, value: r.run.p99Ms }));
        const cpu = (s: PointRuns) => s.runs.map((r) => r.server);
        ratios.push({
          algorithm,
          fractionOfGoCapacity: f,
          offeredRps: ours.point.offeredRps,
          p99Ratio: pairedRatio(p99(ours), p99(go), `open-loop/${algorithm}/${f}/p99`),
          cpuPerCallRatio: cpuPerCallRatio(cpu(ours), cpu(go), `fixed-load/${algorithm}/${f}/cpu`),
        });
      }
    } finally {
      await Promise.all([...servers.values()].map((s) => s.process.stop()));
      ctx.onServers([]);
    }
  }
  return {
    points,
    ratios,
    settings: {
      durationS: options.durationS,
      rounds: options.rounds,
      connections: OPEN_LOOP_CONNECTIONS,
      arrivals: 'poisson',
      fractionsOfOwn: options.ownFractions,
      fractionsOfGo: FRACTIONS_OF_GO,
      absoluteRps: options.absoluteRps,
      capacities,
    },
  };
}

/**
 * One measured run: the server's CPU time (process tree) read from /proc just before the
 * generator starts and just after it exits, with who else used the CPUs meanwhile, as the
 * h2load cells read them. The window covers the generator's connecting and draining too,
 * when the server is idle and spends next to nothing.
 */
async function measureOpenLoop(
  ctx: LoadContext,
  server: LoadServer,
  algorithm: string,
  rps: number,
  durationS: number,
  round: number,
): Promise<MeasuredRun> {
  const before = cpuSnapshot(server.process.pid);
  const { run, generatorCpu } = await runOpenLoop(ctx, server, algorithm, rps, durationS, round);
  const after = cpuSnapshot(server.process.pid);
  const cpu = runCpu(before, after, benchmarkCpus(ctx), ctx.plan.single.serverCpus);
  return {
    round,
    run,
    generatorCpu,
    server: { round, serverCpuS: cpu.serverCpuSeconds, wallS: (after.at - before.at) / 1000, ok: run.ok },
    disturbed: disturbed(cpu),
  };
}

async function runOpenLoop(
  ctx: LoadContext,
  server: LoadServer,
  algorithm: string,
  rps: number,
  durationS: number,
  seed: number,
): Promise<{ run: OpenLoopRun; generatorCpu: number | null }> {
  const loadCpus = ctx.plan.single.loadCpus;
  const args = openLoopArgs(server.process.port, algorithm, rps, durationS, OPEN_LOOP_CONNECTIONS, seed + 1);
  const result = await runSampled(ctx.plan, loadCpus, OPEN_LOOP_BINARY, args, durationS);
  if (result.code !== 0) throw new Error(`open-loop generator exited with ${result.code}: ${result.stderr.trim().slice(-2000)}`);
  return { run: JSON.parse(result.stdout) as OpenLoopRun, generatorCpu: result.loadCpuUtilization };
}

/** A saturated rate where no h2load cell gave one: ghz at 5 x 250, one run. */
async function ghzCapacity(ctx: LoadContext, server: LoadServer, algorithm: string, durationS: number): Promise<number> {
  const run = await runGhz(
    ctx.ghz,
    {
      method: 'GenerateJwt',
      data: { algorithm },
      connections: 5,
      concurrency: 250,
      durationS,
      cpus: Math.max(1, ctx.plan.single.loadCpus.length),
      port: server.process.port,
      output: join(ctx.scratchDir, 'capacity.json'),
      name: 'capacity',
    },
    ctx.plan,
    ctx.plan.single.loadCpus,
  );
  return summarizeGhzReport(run.report).rpsOk;
}

function interval(values: readonly number[], key: string): MedianInterval | null {
  const finite = values.filter((v) => Number.isFinite(v) && v >= 0);
  return finite.length === 0 ? null : bootstrapMedian(finite, seedFor(key));
}

function pointOf(algorithm: string, { point, runs }: PointRuns): OpenLoopPoint {
  const okRuns = runs.filter((r) => r.run.ok > 0);
  const key = `open-loop/${algorithm}/${point.server}/${point.offeredRps}`;
  const generator = runs.flatMap((r) => (r.generatorCpu === null ? [] : [r.generatorCpu]));
  return {
    server: point.server,
    algorithm,
    offeredRps: point.offeredRps,
    ...(point.fractionOfOwnCapacity === undefined ? {} : { fractionOfOwnCapacity: point.fractionOfOwnCapacity }),
    ...(point.fractionOfGoCapacity === undefined ? {} : { fractionOfGoCapacity: point.fractionOfGoCapacity }),
    p50Ms: interval(
      okRuns.map((r) => r.run.p50Ms),
      `${key}/p50`,
    ),
    p99Ms: interval(
      okRuns.map((r) => r.run.p99Ms),
      `${key}/p99`,
    ),
    p999Ms: interval(
      okRuns.map((r) => r.run.p999Ms),
      `${key}/p999`,
    ),
    achievedRps: runs.length === 0 ? Number.NaN : median(runs.map((r) => r.run.achievedRps)),
    errors: runs.reduce((sum, r) => sum + Object.values(r.run.errors).reduce((a, b) => a + b, 0), 0),
    rounds: runs.length,
    generatorCpu: generator.length === 0 ? null : median(generator),
    maxSendLagMs: runs.reduce((max, r) => Math.max(max, r.run.maxSendLagMs), 0),
    cpuPerCallUs: cpuPerCallFigure(
      runs.map((r) => r.server),
      `${key}/cpu`,
    ),
    serverCpu: serverBusy(runs.map((r) => r.server)),
    disturbedRounds: runs.filter((r) => r.disturbed).length,
  };
}
