/**
 * The REST rows (`--rest`): what gRPC costs over REST for the same work. The reference
 * work (bench/peers/README.md, "Work per call") over gRPC and over `POST /token` on
 * HTTP/1.1 keep-alive, on Node (node-fast-jwt against node-rest, both fast-jwt with the
 * same keys) and on Rust (the same binary, tonic against axum), and `jwt-grpc serve` over
 * each protocol its one port serves a REST caller (gRPC, Connect JSON on HTTP/1.1, Connect
 * JSON on HTTP/2), one process each on the 1-core split, all driven by h2load: HTTP/2 with
 * the gRPC body for gRPC, `--h1` with the JSON body for REST, the same calls in flight. Per
 * round, interleaved as the macro cells: OK requests/s and server CPU per OK call; per
 * stack, gRPC / REST per round with its interval, and jwt-grpc's Connect rows against
 * node-rest and against its own gRPC ({@link REST_PAIRS}).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUBJECTS_FILE } from '../kit/paths.js';
import { cpuSnapshot, runCpu } from '../harness/contention.js';
import { pinnedCommand } from '../harness/cores.js';
import { type ServerProcess, startServer } from '../kit/launcher.js';
import { interleavedOrder } from '../macro/column.js';
import { RUST_PEER_BINARY, SERVERS } from '../macro/servers.js';
import { repoPath } from '../kit/paths.js';
import { encodeGenerateJwtRequest, grpcFrame } from '../kit/grpc-body.js';
import { parseH2loadOutput } from './h2load.js';
import { H2LOAD_INSTALL, findH2load } from '../kit/h2load.js';
import { GENERATE_JWT_PATH, figures, pairedRatio } from './h2load-section.js';
import type { LoadContext } from './load-servers.js';
import { type CallCounter, metricsCounter, signalCounter, statusErrors } from './ok-count.js';
import type {
  GeneratorRound,
  RestCell,
  RestPairRatio,
  RestProtocol,
  RestRatio,
  RestSection,
  RestServerName,
  RestStack,
} from './results.js';
import { runSampled } from './sampled-run.js';

/** Calls in flight, the same for every protocol: 5 connections x 10 streams on HTTP/2 (gRPC, Connect-h2), 50 keep-alive connections on HTTP/1.1 (REST, Connect-h1). */
export const REST_IN_FLIGHT = 50;
const GRPC_CONNECTIONS = 5;
export const TOKEN_PATH = '/token';

const FAST_JWT_PEER = repoPath('dist', 'bench', 'peers', 'node-fast-jwt', 'server.js');
const NODE_REST_PEER = repoPath('dist', 'bench', 'peers', 'node-rest', 'server.js');

/**
 * How a server's OK calls are counted: `signal` by the peer's own count (`--count-calls`,
 * SIGUSR1), `metrics` by jwt-grpc's `grpc_server_handled_total` (`--metrics-port 0`),
 * `status` by h2load's HTTP 2xx (REST: the HTTP status is the outcome).
 */
export type RestCount = 'signal' | 'metrics' | 'status';

/** One server of the section: which stack, which protocol, how it starts, how its calls are counted. */
export interface RestServer {
  readonly name: RestServerName;
  readonly stack: RestStack;
  readonly protocol: RestProtocol;
  readonly count: RestCount;
  readonly description: string;
  launch(keysFile: string): { command: string; args: string[]; env: Record<string, string> };
}

function peerArgs(keysFile: string): string[] {
  return ['--host', '127.0.0.1', '--port', '0', '--keys', keysFile, '--subjects', SUBJECTS_FILE];
}

/**
 * `jwt-grpc serve` as the macro table's `jwt-grpc` row runs it (one process, `--verify-issued`:
 * the reference work), with `--metrics-port 0` for the server's own count of calls by status.
 * Every jwt-grpc row runs this one command, so that they differ by the protocol alone.
 */
function jwtGrpcLaunch(keysFile: string): { command: string; args: string[]; env: Record<string, string> } {
  const spec = SERVERS.find((s) => s.name === 'jwt-grpc');
  if (spec === undefined) throw new Error('no jwt-grpc server in macro/servers.ts');
  const launch = spec.launch({ keysFile, subjectsFile: SUBJECTS_FILE, workers: 1 });
  return { command: launch.command, args: [...launch.args, '--metrics-port', '0'], env: { ...launch.env } };
}

const JWT_GRPC = 'jwt-grpc serve --verify-issued (own HTTP/2 transport, one process, `--metrics-port 0` to count calls)';

/**
 * gRPC rows count their calls by status (`--count-calls`, jwt-grpc's metrics): h2load sees
 * only the HTTP 200 a gRPC error travels in. jwt-grpc's Connect rows are counted by the
 * server too, which is stricter than their HTTP status (Connect answers an error non-200).
 */
export const REST_SERVERS: readonly RestServer[] = [
  {
    name: 'node-fast-jwt',
    stack: 'Node',
    protocol: 'grpc',
    count: 'signal',
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
    count: 'status',
    description: 'node:http + fast-jwt, POST /token (bench/peers/node-rest), one process',
    launch: (keys) => ({ command: process.execPath, args: [NODE_REST_PEER, ...peerArgs(keys)], env: {} }),
  },
  {
    name: 'rust',
    stack: 'Rust',
    protocol: 'grpc',
    count: 'signal',
    description: 'tonic + jsonwebtoken (bench/peers/rust), one Tokio worker thread',
    launch: (keys) => ({ command: RUST_PEER_BINARY, args: [...peerArgs(keys), '--count-calls'], env: { TOKIO_WORKER_THREADS: '1' } }),
  },
  {
    name: 'rust-rest',
    stack: 'Rust',
    protocol: 'rest',
    count: 'status',
    description: 'the same binary with --rest: axum + jsonwebtoken, POST /token, one Tokio worker thread',
    launch: (keys) => ({ command: RUST_PEER_BINARY, args: [...peerArgs(keys), '--rest'], env: { TOKIO_WORKER_THREADS: '1' } }),
  },
  {
    name: 'jwt-grpc',
    stack: 'jwt-grpc',
    protocol: 'grpc',
    count: 'metrics',
    description: `gRPC: ${JWT_GRPC}`,
    launch: jwtGrpcLaunch,
  },
  {
    name: 'jwt-grpc-connect-h1',
    stack: 'jwt-grpc',
    protocol: 'connect-h1',
    count: 'metrics',
    description: `Connect unary, JSON, HTTP/1.1 keep-alive, POST ${GENERATE_JWT_PATH}: the same server command`,
    launch: jwtGrpcLaunch,
  },
  {
    name: 'jwt-grpc-connect-h2',
    stack: 'jwt-grpc',
    protocol: 'connect-h2',
    count: 'metrics',
    description: `Connect unary, JSON, HTTP/2 (as the gRPC row's connections and streams): the same server command`,
    launch: jwtGrpcLaunch,
  },
];

/**
 * The rows compared across stacks and protocols, `of` / `to`, with issue 49's targets in
 * calls per CPU-second: Connect JSON on HTTP/1.1 at least level with node:http + fast-jwt
 * doing the same work, and what Connect on HTTP/2 costs over gRPC on the same port
 * (JSON both ways, as a browser or curl sends it; no target).
 */
export const REST_PAIRS: readonly { of: RestServerName; to: RestServerName; target: number | null }[] = [
  { of: 'jwt-grpc-connect-h1', to: 'node-rest', target: 1.0 },
  { of: 'jwt-grpc-connect-h2', to: 'jwt-grpc', target: null },
];

/** The body each protocol sends: the gRPC frame, or the JSON `{"algorithm": ...}` (REST and Connect alike). */
export function restBodyKind(protocol: RestProtocol): 'grpc' | 'json' {
  return protocol === 'grpc' ? 'grpc' : 'json';
}

/**
 * h2load's arguments for one server's protocol: the body file; on HTTP/2 (gRPC,
 * Connect-h2) {@link GRPC_CONNECTIONS} connections sharing the calls in flight as streams;
 * on HTTP/1.1 (REST, Connect-h1) `--h1` with one request in flight per keep-alive connection.
 */
export function restH2loadArgs(protocol: RestProtocol, port: number, bodyFile: string, threads: number, durationS: number): string[] {
  const common = ['-t', String(threads), '-D', `${Math.round(durationS * 1000)}ms`, '-d', bodyFile];
  const h2 = ['-c', String(Math.max(GRPC_CONNECTIONS, threads)), '-m', String(REST_IN_FLIGHT / GRPC_CONNECTIONS)];
  // -m 1: no pipelining, as a REST client's pool sends one request per connection at a time.
  const h1 = ['--h1', '-c', String(REST_IN_FLIGHT), '-m', '1'];
  const json = ['-H', 'content-type: application/json'];
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  switch (protocol) {
    case 'grpc':
      return [...common, ...h2, '-H', 'content-type: application/grpc', '-H', 'te: trailers', url(GENERATE_JWT_PATH)];
    case 'rest':
      return [...common, ...h1, ...json, url(TOKEN_PATH)];
    case 'connect-h1':
      return [...common, ...h1, ...json, url(GENERATE_JWT_PATH)];
    case 'connect-h2':
      return [...common, ...h2, ...json, url(GENERATE_JWT_PATH)];
  }
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
    return {
      skipped: `h2load not found (\`${H2LOAD_INSTALL}\`)`,
      settings,
      servers: [],
      skippedServers: skipped,
      cells: [],
      ratios: [],
      pairs: [],
    };
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
    pairs: restPairs(options.algorithms, cells),
  };
}

async function runAlgorithm(ctx: LoadContext, h2load: string, algorithm: string, options: RestSectionOptions): Promise<RestCell[]> {
  const { loadCpus, serverCpus } = ctx.plan.single;
  const threads = Math.max(1, loadCpus.length);
  const bodies = {
    grpc: join(ctx.scratchDir, `rest-${algorithm}.grpc`),
    json: join(ctx.scratchDir, `rest-${algorithm}.json`),
  };
  writeFileSync(bodies.grpc, grpcFrame(encodeGenerateJwtRequest(algorithm)));
  writeFileSync(bodies.json, JSON.stringify({ algorithm }));
  const args = (entry: Running, durationS: number) => {
    const body = bodies[restBodyKind(entry.server.protocol)];
    return restH2loadArgs(entry.server.protocol, (entry.process as ServerProcess).port, body, threads, durationS);
  };
  const running: Running[] = options.servers.map((server) => ({ server, process: null, counter: null, rounds: [], error: null }));
  try {
    for (const entry of running) {
      try {
        const launch = entry.server.launch(ctx.keysFile);
        const pinned = pinnedCommand(ctx.plan, serverCpus, launch.command, launch.args);
        entry.process = await startServer(entry.server.name, pinned.command, pinned.args, { env: launch.env });
        ctx.onServers(running.flatMap((e) => (e.process === null ? [] : [e.process])));
        entry.counter = await counterOf(entry.server.count, entry.process);
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
    rmSync(bodies.json, { force: true });
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

/** The server's own call counter, or null where h2load's HTTP status is the outcome. */
async function counterOf(count: RestCount, process: ServerProcess): Promise<CallCounter | null> {
  if (count === 'signal') return signalCounter(process);
  if (count === 'metrics') return metricsCounter(process, 'GenerateJwt');
  return null;
}

/**
 * One h2load run with the server's CPU time around it. OK calls: for REST h2load's 2xx
 * (the HTTP status is the outcome); for a counted server the 2xx less the server's own failed count.
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
  const counted = countsBefore !== null && countsAfter !== null;
  // A Connect error is an HTTP status other than 200, already in h2load's `failed`: the server's
  // count adds only the 2xx answers it did not count OK. A gRPC error is an HTTP 200: the server's count is all of it.
  const grpcErrors = !counted
    ? 0
    : entry.server.protocol === 'grpc'
      ? statusErrors(countsBefore, countsAfter, summary.status2xx)
      : Math.max(0, summary.status2xx - (countsAfter.ok - countsBefore.ok));
  const ok = Math.max(0, summary.status2xx - grpcErrors);
  // The server's OK count covers the whole process run, as its CPU time does; REST has h2load's.
  const okCalls = counted ? countsAfter.ok - countsBefore.ok : ok;
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

/** One figure of each round of a cell, for {@link pairedRatio}. */
function perRound(cell: RestCell, f: (r: GeneratorRound) => number): { round: number; value: number }[] {
  return cell.rounds.map((r) => ({ round: r.round, value: f(r.h2load) }));
}

/** a / b per round: requests/s, and calls per server CPU-second (the inverse of CPU per call). */
function cellRatios(a: RestCell, b: RestCell, key: string): Pick<RestRatio, 'requestsPerS' | 'callsPerCpuSecond'> {
  return {
    requestsPerS: pairedRatio(
      perRound(a, (r) => r.requestsPerS),
      perRound(b, (r) => r.requestsPerS),
      `${key}/rps`,
    ),
    callsPerCpuSecond: pairedRatio(
      perRound(a, (r) => 1 / r.cpuPerCallUs),
      perRound(b, (r) => 1 / r.cpuPerCallUs),
      `${key}/cpu`,
    ),
  };
}

/** gRPC / REST of one stack: requests/s and calls per server CPU-second (> 1: gRPC is better), per round. */
function ratioOf(algorithm: string, stack: 'Node' | 'Rust', cells: readonly RestCell[]): RestRatio | null {
  const grpc = cells.find((c) => c.algorithm === algorithm && c.stack === stack && c.protocol === 'grpc');
  const rest = cells.find((c) => c.algorithm === algorithm && c.stack === stack && c.protocol === 'rest');
  if (grpc === undefined || rest === undefined) return null;
  return { algorithm, stack, grpc: grpc.server, rest: rest.server, ...cellRatios(grpc, rest, `rest/${algorithm}/${stack}`) };
}

/**
 * {@link REST_PAIRS} of every algorithm whose two cells ran, per round (> 1: `of` is the better).
 *
 * @example
 * ```ts
 * // hidden: declare const cells: readonly RestCell[];
 * restPairs(['HS256'], cells); // [{ algorithm: 'HS256', of: 'jwt-grpc-connect-h1', to: 'node-rest', target: 1, ... }, ...]
 * ```
 */
export function restPairs(algorithms: readonly string[], cells: readonly RestCell[]): RestPairRatio[] {
  return algorithms.flatMap((algorithm) =>
    REST_PAIRS.flatMap(({ of, to, target }) => {
      const a = cells.find((c) => c.algorithm === algorithm && c.server === of);
      const b = cells.find((c) => c.algorithm === algorithm && c.server === to);
      if (a === undefined || b === undefined) return [];
      return [{ algorithm, of, to, target, ...cellRatios(a, b, `rest/${algorithm}/${of}/${to}`) }];
    }),
  );
}
