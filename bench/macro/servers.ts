import { existsSync } from 'node:fs';
import { repoPath } from '../kit/paths.js';
import type { RpcMethod } from '../ghz/ghz-args.js';
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { type ServerProcess, startServer } from '../kit/launcher.js';
import { findBun } from '../kit/tools.js';
import { NGINX_INSTALL, findNginx } from '../harness/nginx.js';
import type { Transport } from '../../src/lib/index.js';
import type { BackgroundLoad } from './background-load.js';
import type { RowAssets, RowNeed } from './row-assets.js';
import { OPT_IN_ROWS, type OptInRow } from './opt-in-rows.js';
import type { OursRow } from './row.js';
import type { CoreGroup } from './scenarios.js';
import type { GrpcStack, ServerRole } from './results.js';

export type { GrpcStack, ServerRole } from './results.js';

/** What a server's command line may depend on. */
export interface LaunchContext {
  readonly keysFile: string;
  readonly subjectsFile: string;
  /** Processes of a cluster server / GOMAXPROCS: the scenario's `workers` (1, N, or 2 on 1 core). */
  readonly workers: number;
  /** What the run made for the rows that need it (certificates, the OTLP sink); absent: nothing. */
  readonly assets?: RowAssets;
}

export interface LaunchCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to a cleaned copy of the harness's environment (see kit/exec.ts, `childEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
}

/** One server under test: one entry here is all it takes to add a server. */
export interface ServerSpec {
  readonly name: string;
  /** How verdicts name it, e.g. `Go`, `jwt-grpc`. */
  readonly label: string;
  readonly role: ServerRole;
  /** The stack its calls go through. */
  readonly stack: GrpcStack;
  /** Which core groups it serves: single-process servers the 1-core scenarios, clusters the N-core ones. */
  readonly groups: readonly CoreGroup[];
  readonly methods: readonly RpcMethod[];
  /** Whether it runs several processes (node:cluster) when given N cores. */
  readonly cluster: boolean;
  /**
   * Whether it can use every core of an N-core scenario (a cluster, or Go with GOMAXPROCS
   * = N). An echo server is a ceiling on N cores only if it can.
   */
  readonly usesAllCores: boolean;
  /** Something to build before the first start (the Go peer, the Rust peer). */
  readonly build?: 'go-peer' | 'rust-peer';
  /** Why it cannot run on this machine (a runtime not installed), checked once per run; null: it can. */
  readonly unavailable?: () => string | null;
  /** File that must exist, checked before starting, for a clear "build first" message. */
  readonly entryFile: string;
  launch(ctx: LaunchContext): LaunchCommand;
  readonly description: string;
  /** What the run must make before it starts (macro/row-assets.ts); `mtls` also makes ghz dial it with its client certificate. */
  readonly needs?: readonly RowNeed[];
  /** Runs only when named (`--servers`, `--features`, `--baseline-ref`), never by a profile's default selection. */
  readonly optIn?: boolean;
  /** A load beside every measurement of it (macro/background-load.ts). */
  readonly backgroundLoad?: BackgroundLoad;
}

/**
 * What the summary's notes say wherever a row of ours ran: `serve --verify-issued`, the
 * reference work, is not `serve`'s default, so a reader must not take these figures for it.
 */
export const VERIFY_ISSUED_NOTE =
  'every row of jwt-grpc (but jwt-grpc-default, which measures the difference) runs `serve --verify-issued`: GenerateJwt verifies the signature ' +
  'of the token it signed with the public key before answering, as the Go, Rust and Node peers verify theirs (they also parse it again, which ' +
  'ours skips: it built that header and payload itself; bench/PERFORMANCE.md, "ES256 budget"), so every server does the same cryptography; ' +
  '`serve` without the flag skips that verify (docs/benchmarks.md, "Without the reference\'s verify")';

/** The flags every server takes (the peers' contract). */
function commonArgs(ctx: LaunchContext): string[] {
  return ['--host', '127.0.0.1', '--port', '0', '--keys', ctx.keysFile, '--subjects', ctx.subjectsFile];
}

const OURS_CLI = repoPath('dist', 'src', 'bin', 'jwt-grpc.js');
/**
 * The same CLI as tsc wrote it, one module per source file: what a profile runs, so that its
 * frames name src/ files instead of the bundle's chunks (src/bin/bundle.mjs).
 */
const OURS_CLI_UNBUNDLED = repoPath('dist', 'src', 'cli', 'main.js');

/** `args` of a launch with the bundled CLI replaced by its unbundled modules (see {@link OURS_CLI_UNBUNDLED}). */
export function withUnbundledCli(args: readonly string[]): string[] {
  return args.map((arg) => (arg === OURS_CLI ? OURS_CLI_UNBUNDLED : arg));
}
const FAST_JWT_PEER = repoPath('dist', 'bench', 'peers', 'node-fast-jwt', 'server.js');
const ECHO_PEER = repoPath('dist', 'bench', 'peers', 'echo', 'server.js');
const NGINX_FLEET = repoPath('dist', 'bench', 'peers', 'nginx-fleet', 'server.js');
export const GO_PEER_DIR = repoPath('bench', 'peers', 'go');
export const GO_PEER_BINARY = repoPath('bench', 'peers', 'go', 'jwt-peer');
export const RUST_PEER_DIR = repoPath('bench', 'peers', 'rust');
/** Where `cargo build --release` leaves it (the target directory is git-ignored). */
export const RUST_PEER_BINARY = repoPath('bench', 'peers', 'rust', 'target', 'release', 'jwt-peer-rust');

/**
 * The V8 flag docs/cli.md recommends for `jwt-grpc serve` (bench/PERFORMANCE.md): a 4 MiB
 * young-generation semi-space instead of Node 24's default, which grows to 3 x 64 MiB on
 * a machine with this much memory. Cluster workers inherit it from the primary's execArgv.
 * `jwt-grpc-v8-defaults` runs with V8's default instead, in the same run, to show what it changes.
 */
const RECOMMENDED_V8_FLAGS = ['--max-semi-space-size=4'];

/**
 * A Node server: `node [nodeFlags] script args`, one process, or with `cluster` a
 * node:cluster of the scenario's workers (NODEMAXPROCS).
 */
function nodeServer(
  script: string,
  nodeFlags: readonly string[],
  args: (ctx: LaunchContext) => string[],
  cluster: boolean,
): Pick<ServerSpec, 'cluster' | 'usesAllCores' | 'entryFile' | 'launch'> {
  return {
    cluster,
    usesAllCores: cluster,
    entryFile: script,
    launch: (ctx) => ({
      command: process.execPath,
      args: [...nodeFlags, script, ...args(ctx)],
      env: { NODEMAXPROCS: cluster ? String(ctx.workers) : '1' },
    }),
  };
}

/** The stack each transport of `jwt-grpc serve` runs its calls through. */
const STACKS: Readonly<Record<Transport, GrpcStack>> = { http2: 'own HTTP/2', 'grpc-js': 'grpc-js' };

/**
 * A row of `jwt-grpc serve`. The parameters are what the rows differ by; a new row of
 * ours (another transport, metrics on, another runtime) is one more call.
 */
function oursServer(row: OursRow): ServerSpec {
  const args = (ctx: LaunchContext): string[] => [
    'serve',
    ...commonArgs(ctx),
    ...(row.verifyCache ? [] : ['--verify-cache', '0']),
    // Equal work: the Go peer (peers/go/main.go) signs {sub, iat, exp} and no jti, so ours
    // leaves its jti out too (bench/README.md, "Servers under test"); the revocation rows keep it.
    ...(row.jti === true ? [] : ['--no-jti']),
    // Equal work: the peers verify every token they sign before answering, which `serve` does only when told.
    ...(row.verifyIssued === false ? [] : ['--verify-issued']),
    '--transport',
    row.transport,
    ...(row.serveArgs ?? []),
    ...(row.assetArgs?.(assetsOf(row.name, ctx)) ?? []),
  ];
  const common = {
    name: row.name,
    label: row.name,
    role: row.role,
    groups: row.groups,
    methods: row.methods,
    description: row.description,
    ...(row.needs === undefined ? {} : { needs: row.needs }),
    ...(row.optIn === undefined ? {} : { optIn: row.optIn }),
    ...(row.backgroundLoad === undefined ? {} : { backgroundLoad: row.backgroundLoad }),
  };
  if (row.runtime !== 'bun') {
    const node = nodeServer(row.cli ?? OURS_CLI, row.v8Flags, args, row.cluster);
    const assetEnv = row.assetEnv;
    if (assetEnv === undefined) return { ...common, stack: STACKS[row.transport], ...node };
    return {
      ...common,
      stack: STACKS[row.transport],
      ...node,
      launch: (ctx) => {
        const base = node.launch(ctx);
        return { ...base, env: { ...base.env, ...assetEnv(assetsOf(row.name, ctx)) } };
      },
    };
  }
  return {
    ...common,
    stack: 'Bun, own HTTP/2',
    cluster: false,
    usesAllCores: false,
    entryFile: OURS_CLI,
    unavailable: () => {
      const found = findBun();
      return 'skip' in found ? found.skip : null;
    },
    // Where the pinned Bun is missing the run skips this row (`unavailable`); `bun` on PATH is only the command's fallback.
    launch: (ctx) => {
      const found = findBun();
      return { command: 'bun' in found ? found.bun : 'bun', args: [OURS_CLI, ...args(ctx)], env: { NODEMAXPROCS: '1' } };
    },
  };
}

/** An opt-in row as a server, with the recommended V8 flags (the rows of OPT_IN_ROWS, and the RevokeJwt throughput's stores). */
export function optInServer(row: OptInRow): ServerSpec {
  return oursServer({ ...row, v8Flags: RECOMMENDED_V8_FLAGS });
}

/** The run's assets for a row that needs some; the run skips such a row when they could not be made, so none missing here is a harness bug. */
function assetsOf(name: string, ctx: LaunchContext): RowAssets {
  if (ctx.assets === undefined) throw new Error(`${name}: started without the run's row assets`);
  return ctx.assets;
}

/**
 * `jwt-grpc@REF`: the same row as `jwt-grpc` run by another commit's build (`--baseline-ref`,
 * macro/baseline.ts): what the code since that commit costs with its new features off.
 */
export function baselineServer(ref: string, cli: string, hasJtiFlag: boolean, hasVerifyIssuedFlag = true): ServerSpec {
  return oursServer({
    // Without the flag (a commit from before the jti) the build signs none: `jti: true` passes no `--no-jti`.
    ...(hasJtiFlag ? {} : { jti: true }),
    // A build from before `--verify-issued` verifies every token it signs: the same work without the flag.
    ...(hasVerifyIssuedFlag ? {} : { verifyIssued: false }),
    name: `jwt-grpc@${ref}`,
    role: 'variant',
    groups: ['single'],
    methods: BOTH_METHODS,
    cluster: false,
    transport: 'http2',
    v8Flags: RECOMMENDED_V8_FLAGS,
    verifyCache: false,
    optIn: true,
    cli,
    description: `\`jwt-grpc\` as built from commit ${ref}, same flags: the code before a change, against the current code`,
  });
}

const SINGLE: readonly CoreGroup[] = ['single'];
const MULTI: readonly CoreGroup[] = ['multi'];
const BOTH_GROUPS: readonly CoreGroup[] = ['single', 'multi'];
const BOTH_METHODS: readonly RpcMethod[] = ['GenerateJwt', 'VerifyJwt'];

/** The Go peer binary, in its JWT mode or its `--echo` mode, with GOMAXPROCS = the scenario's workers. */
function goServer(name: string, role: 'go' | 'echo', label: string, description: string): ServerSpec {
  return {
    name,
    label,
    role,
    stack: 'grpc-go',
    groups: BOTH_GROUPS,
    methods: BOTH_METHODS,
    cluster: false,
    usesAllCores: true,
    build: 'go-peer',
    entryFile: GO_PEER_BINARY,
    launch: (ctx) => ({
      command: GO_PEER_BINARY,
      args: [...(role === 'echo' ? ['--echo'] : []), ...commonArgs(ctx)],
      env: { GOMAXPROCS: String(ctx.workers) },
    }),
    description,
  };
}

/**
 * The Rust peer (tonic + jsonwebtoken) on gRPC, with TOKIO_WORKER_THREADS = the scenario's
 * workers, as the Go peer's GOMAXPROCS: one Tokio worker thread on one core, N on N.
 */
function rustServer(): ServerSpec {
  return {
    name: 'rust',
    label: 'Rust',
    role: 'rust',
    stack: 'tonic',
    groups: BOTH_GROUPS,
    methods: BOTH_METHODS,
    cluster: false,
    usesAllCores: true,
    build: 'rust-peer',
    entryFile: RUST_PEER_BINARY,
    launch: (ctx) => ({ command: RUST_PEER_BINARY, args: commonArgs(ctx), env: { TOKIO_WORKER_THREADS: String(ctx.workers) } }),
    description: "tonic + jsonwebtoken 10 (aws-lc) peer (bench/peers/rust), TOKIO_WORKER_THREADS = the scenario's workers",
  };
}

const PROTECTED_PEER = repoPath('dist', 'bench', 'peers', 'protected', 'with-issuer.js');

/** A protected-service row: the Greeter and its issuer as one server (bench/peers/protected/with-issuer.ts). */
function protectedServer(verify: 'local' | 'rpc', description: string): ServerSpec {
  return {
    name: `protected-${verify}`,
    label: `protected, ${verify} verify`,
    role: 'protected',
    stack: 'grpc-js',
    groups: SINGLE,
    methods: ['Hello'],
    cluster: false,
    usesAllCores: false,
    entryFile: PROTECTED_PEER,
    launch: (ctx) => ({ command: process.execPath, args: [PROTECTED_PEER, '--verify', verify, ...commonArgs(ctx)], env: {} }),
    description,
  };
}

export const SERVERS: readonly ServerSpec[] = [
  oursServer({
    name: 'jwt-grpc',
    role: 'ours',
    groups: SINGLE,
    methods: BOTH_METHODS,
    cluster: false,
    transport: 'http2',
    v8Flags: RECOMMENDED_V8_FLAGS,
    verifyCache: false,
    description:
      'this package, one process, on its default transport, its own HTTP/2 on node:net (`node --max-semi-space-size=4 jwt-grpc serve --verify-cache 0 --transport http2`)',
  }),
  oursServer({
    name: 'jwt-grpc-cluster',
    role: 'ours',
    groups: MULTI,
    methods: ['GenerateJwt'],
    cluster: true,
    transport: 'http2',
    v8Flags: RECOMMENDED_V8_FLAGS,
    verifyCache: false,
    description: 'this package, NODEMAXPROCS=N (node:cluster primary + N workers), same flags',
  }),
  {
    name: 'jwt-grpc-nginx',
    label: 'N replicas behind nginx',
    role: 'variant',
    stack: 'own HTTP/2',
    groups: MULTI,
    methods: ['GenerateJwt'],
    cluster: true,
    usesAllCores: true,
    entryFile: NGINX_FLEET,
    // nginx is a system package (root to install): without it the run skips this row, saying why.
    unavailable: () => (findNginx() === null ? `nginx is not installed (\`${NGINX_INSTALL}\`, needs root)` : null),
    launch: (ctx) => ({
      command: process.execPath,
      args: [
        NGINX_FLEET,
        ...RECOMMENDED_V8_FLAGS.map((flag) => `--node-flag=${flag}`),
        ...commonArgs(ctx),
        '--',
        '--verify-cache',
        '0',
        '--no-jti',
        '--verify-issued',
        '--transport',
        'http2',
      ],
      // The replica count: each replica itself runs one process.
      env: { NODEMAXPROCS: String(ctx.workers) },
    }),
    description:
      "N = the scenario's workers `jwt-grpc serve` replicas (one process each, same flags as jwt-grpc-cluster) behind nginx (1 worker) with deploy/nginx/jwt-grpc.conf: " +
      "replicas and nginx share the N server cores and their CPU counts as the server's; ghz has the other cores where pinned, else all share every CPU",
  },
  oursServer({
    name: 'jwt-grpc-grpc-js',
    role: 'variant',
    groups: SINGLE,
    methods: BOTH_METHODS,
    cluster: false,
    transport: 'grpc-js',
    v8Flags: RECOMMENDED_V8_FLAGS,
    verifyCache: false,
    description: 'this package on `--transport grpc-js`: what its own transport changes, against the same code on grpc-js',
  }),
  oursServer({
    name: 'jwt-grpc-v8-defaults',
    role: 'variant',
    groups: SINGLE,
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    // V8's own default, given explicitly: a young-generation setting of the user's, which
    // `serve` keeps as it is (cli/v8-flags.ts), so the row stays V8's default in cluster mode too.
    v8Flags: ['--semi-space-growth-factor=2'],
    verifyCache: false,
    description:
      "this package, one process, with V8's default young generation (`--semi-space-growth-factor=2`, its default, given explicitly): what --max-semi-space-size=4 changes",
  }),
  oursServer({
    name: 'jwt-grpc-cached',
    role: 'variant',
    groups: SINGLE,
    methods: ['VerifyJwt'],
    cluster: false,
    transport: 'http2',
    v8Flags: RECOMMENDED_V8_FLAGS,
    verifyCache: true,
    description:
      'this package with its default VerifyJwt cache: the fixed token is a hit every call (what the cache buys, not a fair comparison)',
  }),
  oursServer({
    name: 'jwt-grpc-metrics',
    role: 'variant',
    groups: SINGLE,
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    v8Flags: RECOMMENDED_V8_FLAGS,
    serveArgs: ['--metrics-port', '0'],
    verifyCache: false,
    description:
      'this package with `--metrics-port 0`: Prometheus metrics recorded on every call (nobody scrapes them during the run), against `jwt-grpc`',
  }),
  oursServer({
    name: 'jwt-grpc-bun',
    role: 'variant',
    groups: SINGLE,
    methods: BOTH_METHODS,
    cluster: false,
    transport: 'http2',
    v8Flags: [],
    runtime: 'bun',
    verifyCache: false,
    description: "the same `jwt-grpc serve` on Bun (its node:net, JavaScriptCore): is the gap to Go the runtime's? Bun has no V8 flags",
  }),
  // The opt-in rows (mutual TLS, tracing, a background JWKS load): macro/opt-in-rows.ts.
  ...OPT_IN_ROWS.map(optInServer),
  protectedServer(
    'local',
    "a protected grpc-js service (bench/peers/protected) checking each call's bearer token locally: the JWK Set fetched once from a jwt-grpc issuer (createRemoteVerifier), ES256 verified in-process",
  ),
  protectedServer(
    'rpc',
    'the same service asking the issuer about every token: one VerifyJwt call per call. Both rows run the issuer beside the service on the same core; CPU is the two together',
  ),
  goServer('go', 'go', 'Go', "grpc-go + golang-jwt v5 peer (bench/peers/go), GOMAXPROCS = the scenario's workers"),
  rustServer(),
  {
    name: 'node-fast-jwt',
    label: 'node-fast-jwt',
    role: 'node-peer',
    stack: 'grpc-js',
    groups: SINGLE,
    methods: BOTH_METHODS,
    ...nodeServer(FAST_JWT_PEER, [], commonArgs, false),
    description: 'the ordinary Node server: grpc-js + proto-loader + fast-jwt, one process',
  },
  {
    name: 'node-fast-jwt-cluster',
    label: 'node-fast-jwt-cluster',
    role: 'node-peer',
    stack: 'grpc-js',
    groups: MULTI,
    methods: ['GenerateJwt'],
    ...nodeServer(FAST_JWT_PEER, [], commonArgs, true),
    description: 'the same with NODEMAXPROCS=N (node:cluster primary + N workers sharing the port)',
  },
  {
    name: 'grpc-js-echo',
    label: 'the grpc-js echo',
    role: 'echo',
    stack: 'grpc-js',
    groups: BOTH_GROUPS,
    methods: BOTH_METHODS,
    ...nodeServer(ECHO_PEER, [], commonArgs, false),
    description:
      'grpc-js answering constants, no JWT work: the grpc-js ceiling (one process even on N cores, so no ceiling of an N-process cluster)',
  },
  goServer(
    'go-echo',
    'echo',
    'the Go echo',
    'the Go peer with --echo: grpc-go answering the same constants, no JWT work: the grpc-go ceiling, GOMAXPROCS as the Go peer',
  ),
];

export const SERVER_NAMES: readonly string[] = SERVERS.map((s) => s.name);

/** Whether a server runs a scenario: it serves the scenario's core group and method. */
export function serves(server: ServerSpec, group: CoreGroup, method: RpcMethod): boolean {
  return server.groups.includes(group) && server.methods.includes(method);
}

/**
 * Starts a server of the table pinned to `cpus` (when the plan pins), resolving once it
 * listens; `launch` is its {@link ServerSpec.launch} command, possibly with more flags.
 */
export async function startBenchServer(
  server: ServerSpec,
  launch: LaunchCommand,
  plan: CorePlan,
  cpus: readonly number[],
): Promise<ServerProcess> {
  if (!existsSync(server.entryFile)) {
    throw new Error(
      `${server.name}: ${server.entryFile} does not exist (run \`npm run build\` first; the Go peer is built by the harness)`,
    );
  }
  const { command, args } = pinnedCommand(plan, cpus, launch.command, launch.args);
  return startServer(server.name, command, args, { env: launch.env });
}
