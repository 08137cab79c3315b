/**
 * RevokeJwt's throughput on each store (`--features revocation`, issue 24): `jwt-grpc serve`
 * with jti on and the run's admin secret, on the server core, keeping its revocations in
 * memory only, in an append-only file (fsync'd before each answer, concurrent revocations
 * sharing one write and one fsync), or in Redis (a throwaway redis-server pinned beside
 * the server); ghz on the load CPUs sends RevokeJwt `{jti, expires_at}` with a jti of its
 * own per call (`{{.RequestNumber}}` behind a per-round prefix) and the admin secret as
 * `authorization: Bearer`. Per round: revocations/s (OK answers / ghz's duration) and the
 * server's CPU per revocation (Redis's apart); each reported as the median of the rounds
 * with its 95 % bootstrap interval, as every figure of the macro run. Memory is the store's
 * in-process fallback and the ceiling the durable stores are read against: whether fsync,
 * not the CPU, sets the file store's pace ({@link fsyncVerdict}).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { formatInteger } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import { SUBJECTS_FILE } from '../kit/paths.js';
import type { GhzCall } from '../ghz/ghz-args.js';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { cpuSnapshot, runCpu } from '../harness/contention.js';
import type { CorePlan } from '../harness/cores.js';
import type { ServerProcess } from '../kit/launcher.js';
import { cpuSeconds } from '../kit/proc.js';
import { withoutLoadSide } from './column.js';
import { revocationArgs } from './opt-in-rows.js';
import type { RevokeRound, RevokeStore, RevokeStoreResult, RevokeThroughput } from './results.js';
import type { RowAssets } from './row-assets.js';
import { type ServerSpec, optInServer, startBenchServer } from './servers.js';

export type { RevokeRound, RevokeStore, RevokeStoreResult, RevokeThroughput } from './results.js';
export const REVOKE_STORES: readonly RevokeStore[] = ['memory', 'file', 'redis'];

/** The load shape: one connection, 50 in flight (the 1x50 cells'): enough to fill a group commit. */
export const REVOKE_CONNECTIONS = 1;
export const REVOKE_CONCURRENCY = 50;
/** How long ahead each revoked token expires: well inside the default `maxTtlSeconds`, past the run's end. */
const REVOKE_EXPIRES_IN_S = 3600;

/** ghz's RevokeJwt request: a jti unique per call (`prefix` + ghz's request number) and its expiry. */
export function revokeData(prefix: string, expiresAt: number): Record<string, string> {
  if (!/^[\w-]+$/.test(prefix)) throw new Error(`a jti prefix of letters, digits, _ and - only: ${JSON.stringify(prefix)}`);
  return { jti: `${prefix}{{.RequestNumber}}`, expires_at: String(expiresAt) };
}

/** A prefix no other ghz run of the run shares: the run's tag, the store, the round (0: the warm-up). */
export function jtiPrefix(runTag: string, store: RevokeStore, round: number): string {
  return `${runTag}-${store}-${round}-`;
}

/** `serve`'s store options of each store: none (memory), a copy of the pre-loaded file, the throwaway Redis. */
function storeArgs(store: RevokeStore, assets: RowAssets): string[] {
  switch (store) {
    case 'memory':
      return [];
    case 'file': {
      const revocations = assets.revocations;
      if (revocations === null) throw new Error('the revocations file was not prepared');
      // A copy: the columns' row keeps its file as it was written.
      const file = join(revocations.dir, 'revoke-throughput.jsonl');
      copyFileSync(revocations.file, file);
      return ['--revocations', file];
    }
    case 'redis':
      if (assets.redis === null) throw new Error('redis-server was not started');
      return ['--revocation-store', assets.redis.url];
  }
}

/** The server of one store: `jwt-grpc-revocation`'s flags with that store's. */
export function revokeServer(store: RevokeStore): ServerSpec {
  const name = `jwt-grpc-revoke-${store}`;
  return optInServer({
    name,
    role: 'variant',
    groups: ['single'],
    methods: [],
    cluster: false,
    transport: 'http2',
    jti: true,
    assetArgs: (assets) => revocationArgs(name, assets, storeArgs(store, assets)),
    needs: store === 'redis' ? ['revocations', 'redis'] : ['revocations'],
    optIn: true,
    verifyCache: false,
    description: `RevokeJwt with the revocations ${store === 'memory' ? 'in memory only' : store === 'file' ? 'in an append-only file' : 'in Redis'}`,
  });
}

export interface RevokeOptions {
  readonly ghz: string;
  readonly plan: CorePlan;
  readonly keysFile: string;
  readonly assets: RowAssets;
  /** Why a store cannot run (redis-server missing), by store. */
  readonly missing: ReadonlyMap<RevokeStore, string>;
  readonly scratchDir: string;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
}

/** Every store in turn; a store that fails is recorded, not thrown (the run's other figures stand). */
export async function measureRevokeThroughput(options: RevokeOptions): Promise<RevokeThroughput> {
  const runTag = Date.now().toString(36);
  const stores: RevokeStoreResult[] = [];
  for (const store of REVOKE_STORES) {
    const skipped = options.missing.get(store) ?? null;
    if (skipped !== null) {
      options.log(`  RevokeJwt on ${store}: skipped (${skipped})`);
      stores.push(summarize(store, [], skipped, null));
      continue;
    }
    stores.push(await measureStore(options, store, runTag));
  }
  const of = (store: RevokeStore): RevokeStoreResult | undefined => stores.find((s) => s.store === store);
  return { connections: REVOKE_CONNECTIONS, concurrency: REVOKE_CONCURRENCY, stores, fsync: fsyncVerdict(of('memory'), of('file')) };
}

function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

/** Pins a running process (every thread) to `cpus`, as the plan pins the server; a no-op unpinned. */
function pinRunning(plan: CorePlan, pid: number, cpus: readonly number[]): void {
  if (plan.pinned) execFileSync('taskset', ['-a', '-p', '-c', cpus.join(','), String(pid)], { stdio: 'ignore' });
}

async function measureStore(options: RevokeOptions, store: RevokeStore, runTag: string): Promise<RevokeStoreResult> {
  const { plan, assets } = options;
  const split = plan.single;
  const rounds: RevokeRound[] = [];
  let running: ServerProcess | null = null;
  try {
    const server = revokeServer(store);
    const launch = server.launch({ keysFile: options.keysFile, subjectsFile: SUBJECTS_FILE, workers: 1, assets });
    const file = store === 'file' ? (launch.args[launch.args.indexOf('--revocations') + 1] as string) : null;
    const redisPid = store === 'redis' ? (assets.redis as { pid: number }).pid : null;
    // Redis runs on the server's core: a revocation's whole cost on the server side, as one core's work.
    if (redisPid !== null) pinRunning(plan, redisPid, split.serverCpus);
    running = await startBenchServer(server, launch, plan, split.serverCpus);
    const port = running.port;
    const revocations = assets.revocations;
    if (revocations === null) throw new Error('the admin secret was not prepared');
    const call = (round: number, durationS: number): GhzCall => ({
      method: 'RevokeJwt',
      data: revokeData(jtiPrefix(runTag, store, round), Math.floor(Date.now() / 1000) + REVOKE_EXPIRES_IN_S),
      templated: true,
      metadata: { authorization: `Bearer ${revocations.adminToken}` },
      connections: REVOKE_CONNECTIONS,
      concurrency: REVOKE_CONCURRENCY,
      durationS,
      cpus: split.loadCpus.length,
      port,
      output: join(options.scratchDir, `revoke-${store}.json`),
      name: `RevokeJwt ${store}`,
    });
    if (options.warmupS > 0) await runGhz(options.ghz, call(0, options.warmupS), plan, split.loadCpus);
    const cpus = [...split.serverCpus, ...split.loadCpus.filter((c) => !split.serverCpus.includes(c))];
    for (let round = 1; round <= options.rounds; round++) {
      options.log(`  RevokeJwt on ${store}: round ${round}/${options.rounds}`);
      const linesBefore = file === null ? null : lineCount(file);
      const storeBefore = redisPid === null ? null : cpuSeconds(redisPid);
      const before = cpuSnapshot(running.pid);
      const run = await runGhz(options.ghz, call(round, options.durationS), plan, split.loadCpus);
      const after = cpuSnapshot(running.pid);
      const storeCpuSeconds = redisPid === null || storeBefore === null ? null : (cpuSeconds(redisPid) ?? storeBefore) - storeBefore;
      const cpu = withoutLoadSide(
        runCpu(before, after, cpus, split.serverCpus),
        storeCpuSeconds ?? 0,
        ((after.at - before.at) / 1000) * cpus.length,
      );
      const ghz = summarizeGhzReport(run.report);
      if (ghz.okCount === 0)
        throw new Error(`no RevokeJwt answered OK: ${JSON.stringify(ghz.nonOkByStatus)} ${JSON.stringify(ghz.errors).slice(0, 500)}`);
      rounds.push({
        round,
        ok: ghz.okCount,
        nonOk: ghz.count - ghz.okCount,
        durationS: ghz.totalSeconds,
        rps: ghz.rpsOk,
        p50Ms: ghz.latencyMs.p50,
        p99Ms: ghz.latencyMs.p99,
        serverCpuSeconds: cpu.serverCpuSeconds,
        serverCpuUsPerRevocation: (cpu.serverCpuSeconds / ghz.okCount) * 1e6,
        serverCpuUtilization: cpu.serverCpuSeconds / ghz.totalSeconds,
        storeCpuSeconds,
        linesAppended: file === null || linesBefore === null ? null : lineCount(file) - linesBefore,
        loadCpuUtilization: run.loadCpuUtilization,
        foreignCpuShare: cpu.foreignCpuShare,
      });
      if (running.exit !== undefined) throw new Error(`the server exited: ${running.stderr.slice(-2000).trim()}`);
    }
    return summarize(store, rounds, null, null);
  } catch (error) {
    return summarize(store, rounds, null, (error as Error).message);
  } finally {
    await running?.stop();
    // ghz's report names the admin secret in its options: none is left behind.
    writeFileSync(join(options.scratchDir, `revoke-${store}.json`), '');
  }
}

function summarize(store: RevokeStore, rounds: readonly RevokeRound[], skipped: string | null, error: string | null): RevokeStoreResult {
  const interval = (key: string, values: readonly number[]): MedianInterval | null => {
    const finite = values.filter(Number.isFinite);
    return finite.length === 0 ? null : bootstrapMedian(finite, seedFor(`revoke/${store}/${key}`));
  };
  return {
    store,
    rounds,
    rps: interval(
      'rps',
      rounds.map((r) => r.rps),
    ),
    serverCpuUsPerRevocation: interval(
      'cpu',
      rounds.map((r) => r.serverCpuUsPerRevocation),
    ),
    storeCpuUsPerRevocation:
      store === 'redis'
        ? interval(
            'store-cpu',
            rounds.map((r) => ((r.storeCpuSeconds ?? Number.NaN) / r.ok) * 1e6),
          )
        : null,
    skipped,
    error,
  };
}

/** ghz busy from which it may have set the pace (the ⚑ of the macro tables). */
const LOAD_BOUND_UTILIZATION = 0.9;

/** ghz's highest CPU busy over a store's rounds (sampled over the middle of each run), or null when no run was long enough to sample. */
function ghzBusy(store: RevokeStoreResult): number | null {
  const values = store.rounds.flatMap((r) => (r.loadCpuUtilization === null ? [] : [r.loadCpuUtilization]));
  return values.length === 0 ? null : Math.max(...values);
}

/** Server CPU busy below which a store did not use the core it had: it waited (on the disk, on Redis). */
export const WAITING_UTILIZATION = 0.9;

function medianOf(values: readonly number[]): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const range = (m: MedianInterval): string =>
  m.low === null || m.high === null
    ? `${formatInteger(m.median)} (n=${m.n}, no interval)`
    : `${formatInteger(m.low)}-${formatInteger(m.high)}`;

/**
 * Whether fsync sets the file store's pace, from the intervals only: it does when the
 * file store's revocations/s lie wholly below memory's while its server's core was not
 * saturated (median round < 90 % busy: the answers waited on the disk, not the CPU).
 * Without an interval on either side (fewer than 5 rounds) nothing is said.
 */
export function fsyncVerdict(memory: RevokeStoreResult | undefined, file: RevokeStoreResult | undefined): string | null {
  const m = memory?.rps ?? null;
  const f = file?.rps ?? null;
  if (file === undefined || m === null || f === null || m.low === null || m.high === null || f.low === null || f.high === null) return null;
  const busy = medianOf(file.rounds.map((r) => r.serverCpuUtilization)) ?? 0;
  const figures = `the file store ${range(f)} revocations/s against ${range(m)} in memory, its server's core ${Math.round(busy * 100)} % busy`;
  const memoryGhz = memory === undefined ? null : ghzBusy(memory);
  const loadBound =
    memoryGhz !== null && memoryGhz >= LOAD_BOUND_UTILIZATION
      ? "; ghz was the limit in memory (⚑), so memory's figure is a lower bound"
      : '';
  if (f.high < m.low) {
    return (
      (busy < WAITING_UTILIZATION
        ? `fsync dominates: ${figures}: the answers wait on the disk (group commit already shares one fsync among the revocations that arrive together)`
        : `the file store is slower than memory but CPU-bound, not fsync-bound: ${figures}`) + loadBound
    );
  }
  return `fsync does not dominate: ${figures} (no difference shown)${loadBound}`;
}

/** The summary's section: per store, revocations/s and CPU per revocation, each the median (95 % interval) of the rounds. */
export function revokeSection(result: RevokeThroughput): string {
  const figure = (m: MedianInterval | null, digits = 0): string =>
    m === null
      ? '—'
      : m.low === null || m.high === null
        ? `${m.median.toFixed(digits)} (n=${m.n}, no interval)`
        : `${m.median.toFixed(digits)} (${m.low.toFixed(digits)}-${m.high.toFixed(digits)})`;
  const rows = result.stores.map((s) => {
    const busy = medianOf(s.rounds.map((r) => r.serverCpuUtilization));
    const nonOk = s.rounds.reduce((sum, r) => sum + r.nonOk, 0);
    return [
      s.store,
      s.skipped === null ? figure(s.rps) : `skipped: ${s.skipped}`,
      figure(s.serverCpuUsPerRevocation, 1),
      figure(s.storeCpuUsPerRevocation, 1),
      medianOf(s.rounds.map((r) => r.p99Ms))?.toFixed(2) ?? '—',
      busy === null ? '—' : `${Math.round(busy * 100)} %`,
      ghzBusy(s) === null
        ? 'n/a'
        : `${Math.round((ghzBusy(s) as number) * 100)} %${(ghzBusy(s) as number) >= LOAD_BOUND_UTILIZATION ? ' ⚑' : ''}`,
      String(nonOk),
    ];
  });
  const appended = result.stores.find((s) => s.store === 'file')?.rounds ?? [];
  const short = appended.filter((r) => r.linesAppended !== null && r.linesAppended < r.ok);
  return [
    `RevokeJwt \`{jti, expires_at}\` with the admin secret, a new jti per call, ${result.connections} connection x ${result.concurrency} in flight; ` +
      "`jwt-grpc serve` (jti on, `--admin-token-file`) on one server core, ghz on the other CPUs; Redis's server runs on the server core. " +
      'Median (95 % interval) of the rounds; CPU per revocation = server CPU-seconds / OK answers.',
    markdownTable(
      [
        'store',
        'revocations/s',
        'server CPU µs/revocation',
        'redis-server CPU µs/revocation',
        'p99 ms (median round)',
        'server CPU busy (median round)',
        'ghz busy (highest round)',
        'non-OK',
      ],
      rows,
    ),
    ...(result.fsync === null ? [] : [`- ${result.fsync}.`]),
    ...(short.length === 0
      ? []
      : [`- The file store appended fewer lines than OK answers in ${short.length} round(s): some jti repeated.`]),
    ...result.stores.flatMap((s) => (s.error === null ? [] : [`- ${s.store}: failed: ${s.error.split('\n')[0]}`])),
  ].join('\n\n');
}
