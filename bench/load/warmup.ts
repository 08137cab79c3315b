/**
 * Point 3 of the load sections: how the ratio to Go depends on how warm the server is,
 * and how long a fresh server takes to answer its first call. Each (algorithm, warm-up
 * count) starts every server afresh, sends it that many closed-loop calls (ghz, 1
 * connection x 50 in flight), then measures CPU per call over a few rounds (ghz, same
 * shape, CPU time of the process tree from /proc): what a freshly started pod (a
 * Kubernetes scale-up) costs against a warm one. Every start also times spawn -> first
 * OK GenerateJwt.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bootstrapMedian, seedFor } from '../common/median-interval.js';
import { median } from '../common/stats.js';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { treeCpuSeconds } from '../kit/proc.js';
import { createJwtClient } from '../../src/lib/index.js';
import { interleavedOrder } from '../macro/column.js';
import { type LoadContext, type LoadServerName, startLoadServer } from './load-servers.js';
import type { StartupPoint, WarmupPoint, WarmupSettings } from './results.js';
import { sleep } from '../kit/wait.js';

/** The warm-up counts of the sweep: none, the independent harness's 2,000, and two decades more. */
export const WARMUP_CALLS = [0, 2_000, 20_000, 200_000] as const;
/** Rounds measured after each warm-up (the independent harness measured 3 of 5 s). */
export const ROUNDS_PER_START = 3;
/** The load shape of warm-up and rounds: the headline cell's, 1 connection x 50 in flight. */
const CONNECTIONS = 1;
const CONCURRENCY = 50;

export interface WarmupOptions {
  readonly algorithms: readonly string[];
  readonly servers: readonly LoadServerName[];
  readonly warmupCalls: readonly number[];
  /** Fresh starts per (server, algorithm, warm-up count). */
  readonly starts: number;
  readonly durationS: number;
}

export interface WarmupSectionResult {
  readonly warmup: WarmupPoint[];
  readonly startup: StartupPoint[];
  readonly settings: WarmupSettings;
}

/** One measured round after a warm-up. */
interface Measured {
  readonly start: number;
  readonly round: number;
  readonly cpuPerCallUs: number;
  readonly requestsPerS: number;
}

/** Calls GenerateJwt until one is OK; ms from `since` (performance.now()) to that answer. */
export async function timeToFirstOk(port: number, algorithm: string, since: number, timeoutMs = 30_000): Promise<number> {
  const client = createJwtClient(`127.0.0.1:${port}`, { deadlineMs: 2000 });
  try {
    for (;;) {
      try {
        await client.generateJwt({ algorithm });
        return performance.now() - since;
      } catch (error) {
        if (performance.now() - since > timeoutMs) throw new Error(`no OK GenerateJwt within ${timeoutMs} ms: ${(error as Error).message}`);
        await sleep(2);
      }
    }
  } finally {
    client.close();
  }
}

export async function runWarmupSection(ctx: LoadContext, options: WarmupOptions): Promise<WarmupSectionResult> {
  const measured = new Map<string, Measured[]>();
  const startupMs = new Map<LoadServerName, number[]>();
  const key = (server: string, algorithm: string, calls: number): string => `${server}/${algorithm}/${calls}`;
  const output = join(ctx.scratchDir, 'warmup-ghz.json');
  const loadCpus = ctx.plan.single.loadCpus;
  const ghzCall = (port: number, algorithm: string, durationS: number, totalCalls?: number) => ({
    method: 'GenerateJwt' as const,
    data: { algorithm },
    connections: CONNECTIONS,
    concurrency: CONCURRENCY,
    durationS,
    ...(totalCalls === undefined ? {} : { totalCalls }),
    cpus: Math.max(1, loadCpus.length),
    port,
    output,
    name: 'warm-up sweep',
  });
  for (let start = 1; start <= options.starts; start++) {
    for (const algorithm of options.algorithms) {
      for (const calls of options.warmupCalls) {
        // Servers alternate which goes first from one start to the next.
        for (const { item: name } of interleavedOrder(options.servers, start).filter((o) => o.round === start)) {
          ctx.log(`  warm-up sweep start ${start}/${options.starts}: ${name} ${algorithm} after ${calls} calls`);
          const spawnedAt = performance.now();
          const server = await startLoadServer(ctx, name, false);
          ctx.onServers([server.process]);
          try {
            const firstOk = await timeToFirstOk(server.process.port, algorithm, spawnedAt);
            startupMs.set(name, [...(startupMs.get(name) ?? []), firstOk]);
            // Closed loop: the limit is generous (2 ms a call), the run ends at the count.
            if (calls > 0) await runGhz(ctx.ghz, ghzCall(server.process.port, algorithm, calls / 500, calls), ctx.plan, loadCpus);
            for (let round = 1; round <= ROUNDS_PER_START; round++) {
              const before = treeCpuSeconds(server.process.pid);
              const run = await runGhz(ctx.ghz, ghzCall(server.process.port, algorithm, options.durationS), ctx.plan, loadCpus);
              const cpuS = treeCpuSeconds(server.process.pid) - before;
              const ghz = summarizeGhzReport(run.report);
              const list = measured.get(key(name, algorithm, calls)) ?? [];
              list.push({ start, round, cpuPerCallUs: ghz.okCount > 0 ? (cpuS / ghz.okCount) * 1e6 : Number.NaN, requestsPerS: ghz.rpsOk });
              measured.set(key(name, algorithm, calls), list);
            }
          } finally {
            await server.process.stop();
            ctx.onServers([]);
            rmSync(output, { force: true });
          }
        }
      }
    }
  }
  const warmup: WarmupPoint[] = [];
  for (const algorithm of options.algorithms) {
    for (const calls of options.warmupCalls) {
      for (const name of options.servers) {
        const rows = (measured.get(key(name, algorithm, calls)) ?? []).filter((m) => Number.isFinite(m.cpuPerCallUs));
        if (rows.length === 0) continue;
        const go = measured.get(key('go', algorithm, calls)) ?? [];
        const ratios = name === 'go' ? [] : pairRatios(rows, go);
        warmup.push({
          server: name,
          algorithm,
          warmupCalls: calls,
          ...(ratios.length === 0 ? {} : { ratioToGo: bootstrapMedian(ratios, seedFor(`warmup/${algorithm}/${calls}/ours-go/cpu`)) }),
          cpuPerCallUs: median(rows.map((m) => m.cpuPerCallUs)),
          requestsPerS: median(rows.map((m) => m.requestsPerS)),
          starts: new Set(rows.map((m) => m.start)).size,
          roundsPerStart: ROUNDS_PER_START,
        });
      }
    }
  }
  const startup: StartupPoint[] = [...startupMs].map(([server, values]) => ({
    server,
    timeToFirstOkMs: bootstrapMedian(values, seedFor(`startup/${server}`)),
  }));
  return {
    warmup,
    startup,
    settings: {
      warmupCalls: options.warmupCalls,
      starts: options.starts,
      roundsPerStart: ROUNDS_PER_START,
      durationS: options.durationS,
      connections: CONNECTIONS,
      concurrency: CONCURRENCY,
    },
  };
}

/**
 * Calls per CPU-second ours / Go (= Go's CPU per call / ours) of each (start, round) both
 * servers measured: round r of start s of one against round r of start s of the other.
 */
export function pairRatios(ours: readonly Measured[], go: readonly Measured[]): number[] {
  const ratios: number[] = [];
  for (const m of ours) {
    const g = go.find((x) => x.start === m.start && x.round === m.round);
    if (g !== undefined && m.cpuPerCallUs > 0 && Number.isFinite(g.cpuPerCallUs)) ratios.push(g.cpuPerCallUs / m.cpuPerCallUs);
  }
  return ratios;
}
