/**
 * The start-up section (`--startup`): how long jwt-grpc takes to start, beside a
 * bare Node TCP listener and the Go peer measured in the same run, each process pinned to
 * the same one core, each figure the median of {@link STARTUP_RUNS} runs with its 95 %
 * interval. The runs interleave: run i measures every row once before run i+1, so a noisy
 * neighbour slows every row alike, and each ratio pairs the rows of the same run.
 *
 * Rows: exec to the first OK GenerateJwt (single process with a key file, with ephemeral
 * keys, NODEMAXPROCS=2 with every worker serving, the Go peer); exec to the port accepting
 * (the bare Node listener: the floor any Node server pays); a worker SIGKILLed under load
 * to its replacement serving a new connection; `jwt-grpc token` wall time and
 * `import('jwt-grpc')` against a bare `node -e 0`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SUBJECTS_FILE, repoPath } from '../kit/paths.js';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { connectionsServedBy } from '../kit/proc-net.js';
import { childEnvironment, tasksetCommand } from '../kit/exec.js';
import { freePort } from '../kit/ports.js';
import { sleep } from '../kit/wait.js';
import { processTree } from '../kit/proc.js';
import { GO_PEER_BINARY } from '../macro/servers.js';
import { createJwtClient } from '../../src/lib/index.js';
import type { LoadContext } from './load-servers.js';

/** Runs per row: the issue asks for at least 10. */
export const STARTUP_RUNS = 11;
/** A start that has not answered in this long failed. */
const START_TIMEOUT_MS = 20_000;
/** Calls kept in flight by the load of the worker-replacement row. */
const REPLACEMENT_LOAD_CALLS = 8;

const CLI = repoPath('dist', 'src', 'bin', 'jwt-grpc.js');
/** The `jwt-grpc` entry point (package.json `exports`); dist/src/lib/index.js re-exports every entry point, for the tests. */
const LIB = repoPath('dist', 'src', 'lib', 'issuer.js');

/** One row of the section. */
export interface StartupRow {
  readonly id: StartupRowId;
  readonly what: string;
  readonly ms: MedianInterval;
  /** Paired per run: this row's ms / the reference row's ms (the bare listener, or bare `node -e 0`). */
  readonly ratio: MedianInterval | null;
  readonly ratioTo: StartupRowId | null;
}

export type StartupRowId =
  | 'bare-node-listener'
  | 'go'
  | 'keys-file'
  | 'ephemeral'
  | 'cluster-2'
  | 'worker-replacement'
  | 'bare-node'
  | 'token'
  | 'import';

/** What each row measures, and the row its ratio is to. */
const ROWS: Readonly<Record<StartupRowId, { what: string; ratioTo: StartupRowId | null }>> = {
  'bare-node-listener': { what: 'bare Node TCP listener: exec to the port accepting', ratioTo: null },
  go: { what: 'Go peer: exec to the first OK GenerateJwt', ratioTo: 'bare-node-listener' },
  'keys-file': { what: 'jwt-grpc serve --keys FILE: exec to the first OK GenerateJwt', ratioTo: 'bare-node-listener' },
  ephemeral: { what: 'jwt-grpc serve, ephemeral keys: exec to the first OK GenerateJwt', ratioTo: 'bare-node-listener' },
  'cluster-2': { what: 'NODEMAXPROCS=2 --keys FILE: exec to every worker serving', ratioTo: 'bare-node-listener' },
  'worker-replacement': { what: 'NODEMAXPROCS=2 under load, spare ready: SIGKILL of a worker to its replacement serving', ratioTo: null },
  'bare-node': { what: 'bare `node -e 0`: wall time', ratioTo: null },
  token: { what: '`jwt-grpc token`: wall time', ratioTo: 'bare-node' },
  import: { what: "`import('jwt-grpc')`: wall time of a node that only imports it", ratioTo: 'bare-node' },
};

export interface StartupSettings {
  readonly runs: number;
  readonly cpus: readonly number[];
  readonly replacementLoadCalls: number;
}

export interface StartupSectionResult {
  readonly rows: StartupRow[];
  readonly settings: StartupSettings;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A child pinned to `cpus`, output kept (the cluster's primary names its workers on stderr). */
function spawnPinned(
  cpus: readonly number[],
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): ChildProcess & { output: () => string } {
  const pinned = tasksetCommand(cpus, command, args);
  const child = spawn(pinned.command, pinned.args, { env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return Object.assign(child, { output: () => text });
}

/** SIGKILL to the child and every process under it (a cluster's workers). */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (const pid of processTree(child.pid).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await exited;
}

/** How long one probe call may take: a start is answered far sooner; a connection lost in a dying worker costs no more. */
const PROBE_DEADLINE_MS = 250;

/**
 * Polls GenerateJwt on new connections until one is OK; ms since `since`. `until` may ask
 * more of the answer. Each poll first checks that the port accepts (a bare connection), so
 * grpc-js's reconnect backoff never adds to a start; `listening` skips that where the port
 * is known to be open: a cluster's primary hands connections out in turn, and two per poll
 * would give every poll's gRPC connection to the same worker of two.
 */
async function firstOk(
  port: number,
  since: number,
  child: ChildProcess,
  until: () => boolean = () => true,
  listening = false,
): Promise<number> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the server exited before its first OK call (${child.exitCode ?? child.signalCode})`);
    if (performance.now() - since > START_TIMEOUT_MS) throw new Error(`no OK GenerateJwt within ${START_TIMEOUT_MS} ms`);
    if (listening || (await accepts(port))) {
      // A connection of its own: grpc-js would otherwise share one with every client of the port (the load's).
      const client = createJwtClient(`127.0.0.1:${port}`, {
        deadlineMs: PROBE_DEADLINE_MS,
        channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
      });
      try {
        await client.generateJwt({ algorithm: 'HS256' });
        if (until()) return performance.now() - since;
      } catch {
        // not serving yet
      } finally {
        client.close();
      }
    }
    await sleep(1);
  }
}

/** Exec of a server to its first OK GenerateJwt (or, `listenerOnly`, to its port accepting). */
export async function timeStart(
  cpus: readonly number[],
  command: string,
  args: (port: number) => string[],
  options: { env?: Record<string, string>; listenerOnly?: boolean; workers?: number } = {},
): Promise<number> {
  const port = await freePort();
  const since = performance.now();
  const child = spawnPinned(cpus, command, args(port), options.env);
  try {
    if (options.listenerOnly === true) {
      while (!(await accepts(port))) {
        if (performance.now() - since > START_TIMEOUT_MS) throw new Error(`${command} did not listen within ${START_TIMEOUT_MS} ms`);
        await sleep(1);
      }
      return performance.now() - since;
    }
    // Every worker serving: the banner, which the primary prints once each worker has said it listens.
    const workers = options.workers ?? 1;
    return await firstOk(port, since, child, () => workers === 1 || /workers: \d+ pids/.test(child.output()));
  } finally {
    await stopChild(child);
  }
}

/** Wall time of a command that exits by itself. */
export async function timeRun(cpus: readonly number[], command: string, args: readonly string[]): Promise<number> {
  const since = performance.now();
  const child = spawnPinned(cpus, command, args);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${child.output().slice(0, 500)}`);
  return performance.now() - since;
}

/**
 * A 2-worker cluster, its spare ready (`spare` false: --no-spare-worker), under a steady closed-loop load; one worker SIGKILLed; ms from the kill to
 * an OK call on a new connection that the replacement (the pid the primary names) serves.
 */
export async function timeReplacement(cpus: readonly number[], keysFile: string, spare = true): Promise<number> {
  const port = await freePort();
  const args = [
    CLI,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--keys',
    keysFile,
    '--subjects',
    SUBJECTS_FILE,
    ...(spare ? [] : ['--no-spare-worker']),
  ];
  const child = spawnPinned(cpus, process.execPath, args, { NODEMAXPROCS: '2' });
  const load = createJwtClient(`127.0.0.1:${port}`, { deadlineMs: 5000 });
  let loading = true;
  // A probe whose connection were lost to the killed worker would wait out its deadline,
  // PROBE_DEADLINE_MS, and the figure would include it: node:cluster's round robin lost one
  // now and then; the primary's own hand-off (src/cluster/dispatcher.ts) hands such a one on.
  try {
    // A cluster in its steady state: its spare worker (forked once every worker listens) has started too.
    await firstOk(
      port,
      performance.now(),
      child,
      () => /workers: \d+ pids/.test(child.output()) && (!spare || /spare worker \d+ ready/.test(child.output())),
    );
    const pids = (child.output().match(/workers: \d+ pids ([\d, ]+)/)?.[1] ?? '').split(',').map((p) => Number(p.trim()));
    const victim = pids[0];
    if (victim === undefined || !(victim > 0)) throw new Error('the banner names no worker pid');
    // Calls that fail while the worker dies are expected: the load only has to go on.
    const loops = Array.from({ length: REPLACEMENT_LOAD_CALLS }, async () => {
      while (loading) await load.generateJwt({ algorithm: 'HS256' }).catch(() => sleep(1));
    });
    await sleep(300);
    const before = child.output().length;
    const since = performance.now();
    process.kill(victim, 'SIGKILL');
    let replacement = 0;
    const ms = await firstOk(
      port,
      since,
      child,
      () => {
        // The spare taking the slot (spareWorker's default), or a worker forked into it (--no-spare-worker).
        replacement ||= Number(
          child
            .output()
            .slice(before)
            .match(/the spare (\d+) takes its slot|worker (\d+) started(?! as the spare)/)
            ?.slice(1)
            .find(Boolean) ?? 0,
        );
        return replacement > 0 && connectionsServedBy(replacement, port) > 0;
      },
      true,
    );
    loading = false;
    await Promise.all(loops);
    return ms;
  } finally {
    loading = false;
    load.close();
    await stopChild(child);
  }
}

/** The paired ratios row / reference, run by run. */
function pairedRatios(values: readonly number[], reference: readonly number[]): number[] {
  return values.flatMap((v, i) => (reference[i] !== undefined && reference[i] > 0 ? [v / (reference[i] as number)] : []));
}

export async function runStartupSection(ctx: LoadContext, runs: number = STARTUP_RUNS): Promise<StartupSectionResult> {
  const cpus = ctx.plan.pinned ? ctx.plan.single.serverCpus : [];
  const keys = ctx.keysFile;
  const node = process.execPath;
  // The subjects file, as every bench server has it: GenerateJwt then needs no subject, as the Go peer's.
  const serveArgs = (port: number): string[] => [CLI, 'serve', '--host', '127.0.0.1', '--port', String(port), '--subjects', SUBJECTS_FILE];
  const measure: Record<StartupRowId, () => Promise<number>> = {
    'bare-node-listener': () =>
      timeStart(cpus, node, (port) => ['-e', `require('node:net').createServer().listen(${port}, '127.0.0.1')`], { listenerOnly: true }),
    go: () =>
      timeStart(
        cpus,
        GO_PEER_BINARY,
        (port) => ['--host', '127.0.0.1', '--port', String(port), '--keys', keys, '--subjects', SUBJECTS_FILE],
        { env: { GOMAXPROCS: '1' } },
      ),
    'keys-file': () => timeStart(cpus, node, (port) => [...serveArgs(port), '--keys', keys]),
    ephemeral: () => timeStart(cpus, node, serveArgs),
    'cluster-2': () => timeStart(cpus, node, (port) => [...serveArgs(port), '--keys', keys], { env: { NODEMAXPROCS: '2' }, workers: 2 }),
    'worker-replacement': () => timeReplacement(cpus, keys),
    'bare-node': () => timeRun(cpus, node, ['-e', '0']),
    token: async () => {
      throw new Error('measured with a server running: see below');
    },
    import: () => timeRun(cpus, node, ['--input-type=module', '-e', `await import(${JSON.stringify(LIB)})`]),
  };
  const values = new Map<StartupRowId, number[]>();
  const record = (id: StartupRowId, ms: number): void => void values.set(id, [...(values.get(id) ?? []), ms]);
  // `token` needs an issuer: one server for the whole section, on the load CPUs, out of the measured core's way.
  const issuerPort = await freePort();
  const issuer = spawnPinned(ctx.plan.pinned ? ctx.plan.single.loadCpus : [], node, [...serveArgs(issuerPort), '--keys', keys]);
  try {
    await firstOk(issuerPort, performance.now(), issuer);
    const ids = Object.keys(ROWS) as StartupRowId[];
    for (let run = 1; run <= runs; run++) {
      ctx.log(`  start-up run ${run}/${runs}`);
      // Rotated each run: no row always follows the same one.
      for (const id of ids.map((_, i) => ids[(i + run) % ids.length] as StartupRowId)) {
        record(
          id,
          id === 'token'
            ? await timeRun(cpus, node, [CLI, 'token', '--target', `127.0.0.1:${issuerPort}`, '--alg', 'HS256', '--sub', 'bench'])
            : await measure[id](),
        );
      }
    }
  } finally {
    await stopChild(issuer);
  }
  const rows: StartupRow[] = (Object.keys(ROWS) as StartupRowId[]).map((id) => {
    const mine = values.get(id) ?? [];
    const { what, ratioTo } = ROWS[id];
    const reference = ratioTo === null ? [] : (values.get(ratioTo) ?? []);
    const ratios = pairedRatios(mine, reference);
    return {
      id,
      what,
      ms: bootstrapMedian(mine, seedFor(`startup/${id}`)),
      ratio: ratios.length === 0 ? null : bootstrapMedian(ratios, seedFor(`startup/${id}/ratio`)),
      ratioTo,
    };
  });
  return { rows, settings: { runs, cpus, replacementLoadCalls: REPLACEMENT_LOAD_CALLS } };
}
