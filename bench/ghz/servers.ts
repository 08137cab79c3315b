import { repoPath } from '../common/paths.js';
import type { CoreGroup, RpcMethod } from './scenarios.js';

/**
 * What the ratios compare: ours against the Go peer, the ordinary Node peer, and the
 * grpc-js transport ceiling. `variant` servers are shown but enter no ratio.
 */
export type ServerRole = 'ours' | 'go' | 'node-peer' | 'echo' | 'variant';

/** What a server's command line may depend on. */
export interface LaunchContext {
  readonly keysFile: string;
  readonly subjectsFile: string;
  /** Processes of a cluster server / GOMAXPROCS: the scenario's `workers` (1, N, or 2 on 1 core). */
  readonly cores: number;
}

export interface LaunchCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to a cleaned copy of the harness's environment (see server-process.ts). */
  readonly env: Readonly<Record<string, string>>;
}

/** One server under test: one entry here is all it takes to add a server. */
export interface ServerSpec {
  readonly name: string;
  readonly role: ServerRole;
  /** Which cell groups it serves: single-process servers the 1-core cells, clusters the N-core ones. */
  readonly groups: readonly CoreGroup[];
  readonly methods: readonly RpcMethod[];
  /** Whether it runs several processes (node:cluster) when given N cores. */
  readonly cluster: boolean;
  /** Something to build before the first start (the Go peer). */
  readonly build?: 'go-peer';
  /** File that must exist, checked before starting, for a clear "build first" message. */
  readonly entryFile: string;
  launch(ctx: LaunchContext): LaunchCommand;
  readonly description: string;
}

/** The flags every server takes (the peers' contract). */
function commonArgs(ctx: LaunchContext): string[] {
  return ['--host', '127.0.0.1', '--port', '0', '--keys', ctx.keysFile, '--subjects', ctx.subjectsFile];
}

const OURS_CLI = repoPath('dist', 'src', 'bin', 'jwt-grpc.js');
const FAST_JWT_PEER = repoPath('dist', 'bench', 'peers', 'node-fast-jwt', 'server.js');
const ECHO_PEER = repoPath('dist', 'bench', 'peers', 'echo', 'server.js');
export const GO_PEER_DIR = repoPath('bench', 'peers', 'go');
export const GO_PEER_BINARY = repoPath('bench', 'peers', 'go', 'jwt-peer');

// Our server with the VerifyJwt cache off: the peers verify every call, and the fixed
// token of the VerifyJwt cell would otherwise be a cache hit every time. GenerateJwt
// never uses that cache (a fresh token is verified uncached), so it is not affected.
const oursArgs = (ctx: LaunchContext): string[] => ['serve', ...commonArgs(ctx), '--verify-cache', '0'];

/**
 * The V8 flag the README recommends for `jwt-grpc serve` (bench/PERFORMANCE.md): a 4 MiB
 * young-generation semi-space instead of Node 24's default, which grows to 3 x 64 MiB on
 * a machine with this much memory. Cluster workers inherit it from the primary's execArgv.
 * `jwt-grpc-v8-defaults` runs without it, in the same run, to show what it changes.
 */
const RECOMMENDED_V8_FLAGS = ['--max-semi-space-size=4'];

export const SERVERS: readonly ServerSpec[] = [
  {
    name: 'jwt-grpc',
    role: 'ours',
    groups: ['single'],
    methods: ['GenerateJwt', 'VerifyJwt'],
    cluster: false,
    entryFile: OURS_CLI,
    launch: (ctx) => ({ command: process.execPath, args: [...RECOMMENDED_V8_FLAGS, OURS_CLI, ...oursArgs(ctx)], env: { NODEMAXPROCS: '1' } }),
    description: 'this package, one process (`node --max-semi-space-size=4 jwt-grpc serve --verify-cache 0`)',
  },
  {
    name: 'jwt-grpc-cluster',
    role: 'ours',
    groups: ['multi'],
    methods: ['GenerateJwt'],
    cluster: true,
    entryFile: OURS_CLI,
    launch: (ctx) => ({
      command: process.execPath,
      args: [...RECOMMENDED_V8_FLAGS, OURS_CLI, ...oursArgs(ctx)],
      env: { NODEMAXPROCS: String(ctx.cores) },
    }),
    description: 'this package, NODEMAXPROCS=N (node:cluster primary + N workers), same flags',
  },
  {
    name: 'jwt-grpc-v8-defaults',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt'],
    cluster: false,
    entryFile: OURS_CLI,
    launch: (ctx) => ({ command: process.execPath, args: [OURS_CLI, ...oursArgs(ctx)], env: { NODEMAXPROCS: '1' } }),
    description: 'this package, one process, with Node\'s default V8 heap flags: what --max-semi-space-size=4 changes',
  },
  {
    name: 'jwt-grpc-cached',
    role: 'variant',
    groups: ['single'],
    methods: ['VerifyJwt'],
    cluster: false,
    entryFile: OURS_CLI,
    launch: (ctx) => ({ command: process.execPath, args: [...RECOMMENDED_V8_FLAGS, OURS_CLI, 'serve', ...commonArgs(ctx)], env: { NODEMAXPROCS: '1' } }),
    description: 'this package with its default VerifyJwt cache: the fixed token is a hit every call (what the cache buys, not a fair comparison)',
  },
  {
    name: 'go',
    role: 'go',
    groups: ['single', 'multi'],
    methods: ['GenerateJwt', 'VerifyJwt'],
    cluster: false,
    build: 'go-peer',
    entryFile: GO_PEER_BINARY,
    launch: (ctx) => ({ command: GO_PEER_BINARY, args: commonArgs(ctx), env: { GOMAXPROCS: String(ctx.cores) } }),
    description: 'grpc-go + golang-jwt v5 peer (bench/peers/go), GOMAXPROCS = the cell\'s cores',
  },
  {
    name: 'node-fast-jwt',
    role: 'node-peer',
    groups: ['single'],
    methods: ['GenerateJwt', 'VerifyJwt'],
    cluster: false,
    entryFile: FAST_JWT_PEER,
    launch: (ctx) => ({ command: process.execPath, args: [FAST_JWT_PEER, ...commonArgs(ctx)], env: { NODEMAXPROCS: '1' } }),
    description: 'the ordinary Node server: grpc-js + proto-loader + fast-jwt, one process',
  },
  {
    name: 'node-fast-jwt-cluster',
    role: 'node-peer',
    groups: ['multi'],
    methods: ['GenerateJwt'],
    cluster: true,
    entryFile: FAST_JWT_PEER,
    launch: (ctx) => ({ command: process.execPath, args: [FAST_JWT_PEER, ...commonArgs(ctx)], env: { NODEMAXPROCS: String(ctx.cores) } }),
    description: 'the same with NODEMAXPROCS=N (node:cluster, the reference\'s pattern)',
  },
  {
    name: 'grpc-js-echo',
    role: 'echo',
    groups: ['single', 'multi'],
    methods: ['GenerateJwt', 'VerifyJwt'],
    cluster: false,
    entryFile: ECHO_PEER,
    launch: (ctx) => ({ command: process.execPath, args: [ECHO_PEER, ...commonArgs(ctx)], env: {} }),
    description: 'grpc-js answering constants, no JWT work: the transport ceiling (one process even on N cores)',
  },
];

export const SERVER_NAMES: readonly string[] = SERVERS.map((s) => s.name);

/** Whether a server runs a scenario: it serves the scenario's core group and method. */
export function serves(server: ServerSpec, group: CoreGroup, method: RpcMethod): boolean {
  return server.groups.includes(group) && server.methods.includes(method);
}
