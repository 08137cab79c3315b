/**
 * The REST rows (`--rest`): what gRPC costs over REST for the same work. The reference
 * work (bench/peers/README.md, "Work per call") over gRPC and over `POST /token` on
 * HTTP/1.1 keep-alive, on Node (node-fast-jwt against node-rest, both fast-jwt with the
 * same keys) and on Rust (the same binary, tonic against axum), one process each on the
 * 1-core split, all driven by h2load: HTTP/2 with the gRPC body for gRPC, `--h1` with the
 * JSON body for REST, the same calls in flight. Per round, interleaved as the macro cells:
 * OK requests/s and server CPU per OK call; per stack, gRPC / REST per round with its interval.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUBJECTS_FILE } from '../kit/paths.js';
import { cpuSnapshot, runCpu } from '../harness/contention.js';
import { pinnedCommand } from '../harness/cores.js';
import { type ServerProcess, startServer } from '../kit/launcher.js';
import { interleavedOrder } from '../macro/column.js';
import { RUST_PEER_BINARY } from '../macro/servers.js';
import { repoPath } from '../kit/paths.js';
import { encodeGenerateJwtRequest, grpcFrame } from '../kit/grpc-body.js';
import { parseH2loadOutput } from './h2load.js';
import { H2LOAD_INSTALL, findH2load } from '../kit/h2load.js';
import { GENERATE_JWT_PATH, figures, pairedRatio } from './h2load-section.js';
import type { LoadContext } from './load-servers.js';
import { type CallCounter, signalCounter, statusErrors } from './ok-count.js';
import type { GeneratorRound, RestCell, RestRatio, RestSection, RestServerName } from './results.js';
import { runSampled } from './sampled-run.js';

/** Calls in flight, the same for both protocols: 5 connections x 10 streams (gRPC), 50 keep-alive connections (REST). */
export const REST_IN_FLIGHT = 50;
const GRPC_CONNECTIONS = 5;
export const TOKEN_PATH = '/token';

const FAST_JWT_PEER = repoPath('dist', 'bench', 'peers', 'node-fast-jwt', 'server.js');
const NODE_REST_PEER = repoPath('dist', 'bench', 'peers', 'node-rest', 'server.js');

/** One server of the section: which stack, which protocol, how it starts. */
export interface RestServer {
  readonly name: RestServerName;
  readonly stack: 'Node' | 'Rust';
  readonly protocol: 'grpc' | 'rest';
  readonly description: string;
  launch(keysFile: string): { command: string; args: string[]; env: Record<string, string> };
}

function peerArgs(keysFile: string): string[] {
  return ['--host', '127.0.0.1', '--port', '0', '--keys', keysFile, '--subjects', SUBJECTS_FILE];
}

/** gRPC rows count their calls by status (`--count-calls`): h2load sees only the HTTP 200 a gRPC error travels in. */
export const REST_SERVERS: readonly RestServer[] = [
  {
    name: 'node-fast-jwt',
    stack: 'Node',
    protocol: 'grpc',
    description: 'grpc-js + fast-jwt (bench/peers/node-fast-jwt), one process',
    launch: (keys) => ({
      command: process.execPath,
      args: [FAST_JWT_PEER, ...peerArgs(keys), '--count-calls'],
      env: { NODEMAXPROCS: '1' },
    }),
  },
  {
    name: 'node-rest',
    stack: 'Node',
    protocol: 'rest',
    description: 'node:http + fast-jwt, POST /token (bench/peers/node-rest), one process',
    launch: (keys) => ({ command: process.execPath, args: [NODE_REST_PEER, ...peerArgs(keys)], env: {} }),
  },
  {
    name: 'rust',
    stack: 'Rust',
    protocol: 'grpc',
    description: 'tonic + jsonwebtoken (bench/peers/rust), one Tokio worker thread',
    launch: (keys) => ({ command: RUST_PEER_BINARY, args: [...peerArgs(keys), '--count-calls'], env: { TOKIO_WORKER_THREADS: '1' } }),
  },
  {
    name: 'rust-rest',
    stack: 'Rust',
    protocol: 'rest',
    description: 'the same binary with --rest: axum + jsonwebtoken, POST /token, one Tokio worker thread',
    launch: (keys) => ({ command: RUST_PEER_BINARY, args: [...peerArgs(keys), '--rest'], env: { TOKIO_WORKER_THREADS: '1' } }),
  },
];

/** h2load's arguments for one server's protocol: the body file, and for REST `--h1` with one request in flight per keep-alive connection. */
export function restH2loadArgs(protocol: 'grpc' | 'rest', port: number, bodyFile: string, threads: number, durationS: number): string[] {
  const common = ['-t', String(threads), '-D', `${Math.round(durationS * 1000)}ms`, '-d', bodyFile];
  if (protocol === 'grpc') {
    return [
      ...common,
      '-c',
      String(Math.max(GRPC_CONNECTIONS, threads)),
      '-m',
      String(REST_IN_FLIGHT / GRPC_CONNECTIONS),
      '-H',
      'content-type: application/grpc',
      '-H',
      'te: trailers',
      `http://127.0.0.1:${port}${GENERATE_JWT_PATH}`,
    ];
  }
  // -m 1: no pipelining, as a REST client's pool sends one request per connection at a time.
  return [
    ...common,
    '--h1',
    '-c',
    String(REST_IN_FLIGHT),
    '-m',
    '1',
    '-H',
    'content-type: application/json',
    `http://127.0.0.1:${port}${TOKEN_PATH}`,
  ];
}

export interface RestSectionOptions {
  readonly algorithms: readonly string[];
  /** Servers to run; the others are left out (a Rust peer that did not build: `skipped`). */
  readonly servers: readonly RestServer[];
  /** Why a server is not run, by name (noted in the section). */
  readonly skipped: ReadonlyMap<string, string>;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
}

interface Running {
  readonly server: RestServer;
  process: ServerProcess | null;
  counter: CallCounter | null;
  readonly rounds: { round: number; h2load: GeneratorRound }[];
  error: string | null;
}

export async function runRestSection(ctx: LoadContext, options: RestSectionOptions): Promise<RestSection> {
  const { serverCpus, loadCpus } = ctx.plan.single;
  const threads = Math.max(1, loadCpus.length);
  const settings = {
    inFlight: REST_IN_FLIGHT,
    grpcConnections: GRPC_CONNECTIONS,
    restConnections: REST_IN_FLIGHT,
    threads,
    durationS: options.durationS,
    warmupS: options.warmupS,
    rounds: options.rounds,
    serverCpus,
    loadCpus,
  };
  const skipped = [...options.skipped].map(([server, reason]) => ({ server, reason }));
  const h2load = findH2load();
  if (h2load === null)
    return { skipped: `h2load not found (\`${H2LOAD_INSTALL}\`)`, settings, servers: [], skippedServers: skipped, cells: [], ratios: [] };
  const cells: RestCell[] = [];
  for (const algorithm of options.algorithms) cells.push(...(await runAlgorithm(ctx, h2load, algorithm, options)));
  const ratios = options.algorithms.flatMap((a) => (['Node', 'Rust'] as const).map((stack) => ratioOf(a, stack, cells)));
  return {
    skipped: null,
    settings,
    servers: options.servers.map((s) => ({ name: s.name, stack: s.stack, protocol: s.protocol, description: s.description })),
    skippedServers: skipped,
    cells,
    ratios: ratios.filter((r): r is RestRatio => r !== null),
  };
}

async function runAlgorithm(ctx: LoadContext, h2load: string, algorithm: string, options: RestSectionOptions): Promise<RestCell[]> {
  const { loadCpus, serverCpus } = ctx.plan.single;
  const threads = Math.max(1, loadCpus.length);
  const bodies = {
    grpc: join(ctx.scratchDir, `rest-${algorithm}.grpc`),
    rest: join(ctx.scratchDir, `rest-${algorithm}.json`),
  };
  writeFileSync(bodies.grpc, grpcFrame(encodeGenerateJwtRequest(algorithm)));
  writeFileSync(bodies.rest, JSON.stringify({ algorithm }));
  const args = (entry: Running, durationS: number) =>
    restH2loadArgs(entry.server.protocol, (entry.process as ServerProcess).port, bodies[entry.server.protocol], threads, durationS);
  const running: Running[] = options.servers.map((server) => ({ server, process: null, counter: null, rounds: [], error: null }));
  try {
    for (const entry of running) {
      try {
        const launch = entry.server.launch(ctx.keysFile);
        const pinned = pinnedCommand(ctx.plan, serverCpus, launch.command, launch.args);
        entry.process = await startServer(entry.server.name, pinned.command, pinned.args, { env: launch.env });
        ctx.onServers(running.flatMap((e) => (e.process === null ? [] : [e.process])));
        if (entry.server.protocol === 'grpc') entry.counter = signalCounter(entry.process);
        if (options.warmupS > 0) await runSampled(ctx.plan, loadCpus, h2load, args(entry, options.warmupS), options.warmupS);
        entry.process.pause();
      } catch (error) {
        entry.error = (error as Error).message;
      }
    }
    for (const { item: entry, round } of interleavedOrder(running, options.rounds)) {
      if (entry.process === null || entry.error !== null) continue;
      ctx.log(`  rest ${algorithm} ${entry.server.name} round ${round}/${options.rounds}`);
      try {
        entry.process.resume();
        entry.rounds.push({ round, h2load: await measure(ctx, h2load, entry, args(entry, options.durationS), options.durationS) });
      } catch (error) {
        entry.error = (error as Error).message;
      } finally {
        entry.process.pause();
      }
    }
  } finally {
    await Promise.all(running.map((e) => e.process?.stop()));
    ctx.onServers([]);
    rmSync(bodies.grpc, { force: true });
    rmSync(bodies.rest, { force: true });
  }
  return running.map((e) => ({
    server: e.server.name,
    stack: e.server.stack,
    protocol: e.server.protocol,
    algorithm,
    rounds: e.rounds,
    h2load: figures(
      e.rounds.map((r) => r.h2load),
      `rest/${algorithm}/${e.server.name}`,
    ),
    error: e.error,
  }));
}

/**
 * One h2load run with the server's CPU time around it. OK calls: for REST h2load's 2xx
 * (the HTTP status is the outcome); for gRPC the 2xx less the server's own failed count.
 */
async function measure(
  ctx: LoadContext,
  h2load: string,
  entry: Running,
  args: readonly string[],
  durationS: number,
): Promise<GeneratorRound> {
  const process = entry.process as ServerProcess;
  const countsBefore = entry.counter === null ? null : await entry.counter();
  const before = cpuSnapshot(process.pid);
  const { serverCpus, loadCpus } = ctx.plan.single;
  const run = await runSampled(ctx.plan, loadCpus, h2load, args, durationS);
  const cpu = runCpu(before, cpuSnapshot(process.pid), [...serverCpus, ...loadCpus.filter((c) => !serverCpus.includes(c))], serverCpus);
  const countsAfter = entry.counter === null ? null : await entry.counter();
  if (run.code !== 0) throw new Error(`h2load exited with ${run.code}: ${(run.stdout + run.stderr).trim().slice(-2000)}`);
  const summary = parseH2loadOutput(run.stdout);
  const grpcErrors = countsBefore === null || countsAfter === null ? 0 : statusErrors(countsBefore, countsAfter, summary.status2xx);
  const ok = Math.max(0, summary.status2xx - grpcErrors);
  // The server's OK count covers the whole process run, as its CPU time does; REST has h2load's.
  const okCalls = countsBefore !== null && countsAfter !== null ? countsAfter.ok - countsBefore.ok : ok;
  return {
    requestsPerS: summary.finishedS > 0 ? ok / summary.finishedS : Number.NaN,
    // h2load's `failed` includes the HTTP-level failures (REST's 4xx/5xx); gRPC's are in grpcErrors.
    errors: grpcErrors + summary.failed + summary.errored + summary.timeout,
    serverCpu: cpu.serverCpuSeconds / run.wallS,
    generatorCpu: run.loadCpuUtilization,
    cpuPerCallUs: okCalls > 0 ? (cpu.serverCpuSeconds / okCalls) * 1e6 : Number.NaN,
    foreignCpuShare: cpu.foreignCpuShare,
    stealShare: cpu.stealShare,
  };
}

/** gRPC / REST of one stack: requests/s and calls per server CPU-second (> 1: gRPC is better), per round. */
function ratioOf(algorithm: string, stack: 'Node' | 'Rust', cells: readonly RestCell[]): RestRatio | null {
  const grpc = cells.find((c) => c.algorithm === algorithm && c.stack === stack && c.protocol === 'grpc');
  const rest = cells.find((c) => c.algorithm === algorithm && c.stack === stack && c.protocol === 'rest');
  if (grpc === undefined || rest === undefined) return null;
  const pick = (cell: RestCell, f: (r: GeneratorRound) => number) => cell.rounds.map((r) => ({ round: r.round, value: f(r.h2load) }));
  return {
    algorithm,
    stack,
    grpc: grpc.server,
    rest: rest.server,
    requestsPerS: pairedRatio(
      pick(grpc, (r) => r.requestsPerS),
      pick(rest, (r) => r.requestsPerS),
      `rest/${algorithm}/${stack}/rps`,
    ),
    callsPerCpuSecond: pairedRatio(
      pick(grpc, (r) => 1 / r.cpuPerCallUs),
      pick(rest, (r) => 1 / r.cpuPerCallUs),
      `rest/${algorithm}/${stack}/cpu`,
    ),
  };
}
