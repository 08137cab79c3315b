/**
 * The JWK Set over HTTP at saturation: `jwt-grpc serve --http-port 0 --issuer ...` on the
 * server core, h2load (HTTP/1.1, 100 connections) on the load core, in rounds. Per round:
 * requests/s (succeeded responses / h2load's duration) and requests per server CPU-second
 * (requests/s per core, whether or not h2load saturated the server); each reported as the
 * median of the rounds with its 95 % bootstrap interval, as every figure of the macro run.
 */
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { formatInteger } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import { SUBJECTS_FILE } from '../kit/paths.js';
import { cpuSnapshot, runCpu } from '../harness/contention.js';
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { launch, type ServerProcess } from '../kit/launcher.js';
import { discoveryPort } from './background-load.js';
import type { JwksRound, JwksThroughput } from './results.js';
import { type ServerSpec, startBenchServer } from './servers.js';

/** Connections of the saturating load (the figure: 100). */
export const JWKS_CONNECTIONS = 100;

export type { JwksRound, JwksThroughput } from './results.js';

/** h2load's arguments for one saturating run of `durationS` seconds. */
export function saturatingArgs(port: number, durationS: number, threads: number): string[] {
  return [
    '--h1',
    '-c',
    String(JWKS_CONNECTIONS),
    '-t',
    String(Math.max(1, Math.min(threads, JWKS_CONNECTIONS))),
    '-D',
    String(Math.max(1, Math.round(durationS))),
    `http://127.0.0.1:${port}/.well-known/jwks.json`,
  ];
}

/**
 * h2load's counts from its text report (`finished in 5.00s, ...`, `requests: N total, N started, N done, ...`,
 * `status codes: N 2xx, ...`): a request succeeded when it got a 2xx (h2load's own `succeeded` counts any status).
 */
export function parseH2loadReport(text: string): { durationS: number; succeeded: number; failed: number } | null {
  const finished = /finished in ([\d.]+)(m?s),/.exec(text);
  const requests = /requests: (\d+) total, \d+ started, (\d+) done/.exec(text);
  const statuses = /status codes: (\d+) 2xx/.exec(text);
  if (finished === null || requests === null || statuses === null) return null;
  const durationS = Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1);
  const succeeded = Number(statuses[1]);
  return { durationS, succeeded, failed: Number(requests[1]) - succeeded };
}

export interface JwksOptions {
  readonly h2load: string;
  readonly server: ServerSpec;
  readonly plan: CorePlan;
  readonly keysFile: string;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
}

/** Runs the rounds; a failure is recorded in the result, not thrown (the gRPC figures of the run stand). */
export async function measureJwksThroughput(options: JwksOptions): Promise<JwksThroughput> {
  const { plan } = options;
  const split = plan.single;
  const rounds: JwksRound[] = [];
  let running: ServerProcess | null = null;
  try {
    const launchCommand = options.server.launch({ keysFile: options.keysFile, subjectsFile: SUBJECTS_FILE, workers: 1 });
    running = await startBenchServer(options.server, launchCommand, plan, split.serverCpus);
    const port = discoveryPort(running.stdout);
    if (port === null) throw new Error(`${options.server.name}: its start lines name no discovery port`);
    const h2load = async (durationS: number): Promise<{ text: string; code: number | null }> => {
      const { command, args } = pinnedCommand(plan, split.loadCpus, options.h2load, saturatingArgs(port, durationS, split.loadCpus.length));
      const child = launch(command, args);
      const exit = await child.closed;
      return { text: child.stdout + child.stderr, code: exit.code };
    };
    if (options.warmupS > 0) await h2load(options.warmupS);
    const cpus = [...split.serverCpus, ...split.loadCpus.filter((c) => !split.serverCpus.includes(c))];
    for (let round = 1; round <= options.rounds; round++) {
      options.log(`  JWKS over HTTP: round ${round}/${options.rounds}`);
      const before = cpuSnapshot(running.pid);
      const run = await h2load(options.durationS);
      const cpu = runCpu(before, cpuSnapshot(running.pid), cpus, split.serverCpus);
      const parsed = parseH2loadReport(run.text);
      if (run.code !== 0 || parsed === null) throw new Error(`h2load exited with ${run.code}: ${run.text.trim().slice(-2000)}`);
      rounds.push({
        round,
        ...parsed,
        rps: parsed.succeeded / parsed.durationS,
        serverCpuSeconds: cpu.serverCpuSeconds,
        serverCpuUtilization: cpu.serverCpuSeconds / (parsed.durationS * split.serverCpus.length),
        perCoreRps: parsed.succeeded / cpu.serverCpuSeconds,
        foreignCpuShare: cpu.foreignCpuShare,
      });
    }
    return summarize(options.server.name, rounds, null);
  } catch (error) {
    return summarize(options.server.name, rounds, (error as Error).message);
  } finally {
    await running?.stop();
  }
}

function summarize(server: string, rounds: readonly JwksRound[], error: string | null): JwksThroughput {
  const interval = (key: 'rps' | 'perCoreRps'): MedianInterval | null => {
    const values = rounds.map((r) => r[key]).filter(Number.isFinite);
    return values.length === 0 ? null : bootstrapMedian(values, seedFor(`jwks/${key}`));
  };
  return { server, connections: JWKS_CONNECTIONS, rounds, rps: interval('rps'), perCoreRps: interval('perCoreRps'), error };
}

/** The summary's section: requests/s and requests/s per core, each the median (95 % interval) of the rounds. */
export function jwksSection(result: JwksThroughput): string {
  const figure = (m: MedianInterval | null): string =>
    m === null
      ? '—'
      : m.low === null || m.high === null
        ? `${formatInteger(m.median)} (n=${m.n}, no interval)`
        : `${formatInteger(m.median)} (${formatInteger(m.low)}-${formatInteger(m.high)})`;
  const failed = result.rounds.reduce((sum, r) => sum + r.failed, 0);
  const busy = result.rounds.map((r) => r.serverCpuUtilization).sort((a, b) => a - b);
  const medianBusy = busy.length === 0 ? null : busy[busy.length >> 1];
  return [
    `GET /.well-known/jwks.json on \`${result.server}\` (one server core), h2load --h1 with ${result.connections} connections on the other CPUs; ` +
      `median (95 % interval) of ${result.rounds.length} rounds. Per core = succeeded requests / server CPU-seconds.`,
    markdownTable(
      ['figure', 'value'],
      [
        ['requests/s', figure(result.rps)],
        ['requests/s per server core', figure(result.perCoreRps)],
        ['server CPU busy (median round)', medianBusy === null || medianBusy === undefined ? '—' : `${Math.round(medianBusy * 100)} %`],
        ['failed requests', String(failed)],
      ],
    ),
    ...(result.error === null ? [] : [`- Failed: ${result.error.split('\n')[0]}`]),
  ].join('\n\n');
}
