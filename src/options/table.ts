/**
 * The options of jwt-grpc, once: name, default, bounds, environment twin, CLI flag and
 * help line. Library validation (createJwtServer, addJwtService, createVerifier,
 * runCluster), the CLI's parser and `jwt-grpc --help` all read this table, and a test
 * checks the options tables of docs/library.md and docs/cluster.md against it.
 *
 * Adding an option: add its row here; add the member, with its TSDoc, to the public
 * interface of its group (the compiler insists: each interface is checked against its
 * rows); use it. A row with `cli` is a flag and an environment variable at once, and the
 * parsed value reaches the library without further code.
 *
 * Rules that hold for every option: an integer option takes integers only (seconds,
 * milliseconds, bytes; never fractions); a cache of 0 entries, or `false`, is off; a
 * flag wins over its environment twin.
 */
import type { ChannelOptions } from '@grpc/grpc-js';
import {
  type OptionKind,
  cacheSize,
  choice,
  choices,
  directories,
  flag,
  integer,
  interceptors,
  logger,
  metricsRegistry,
  origins,
  record,
  revocationStore,
  signingKeys,
  strings,
  text,
  tracing,
  workerCount,
  policyKind,
} from './kinds.js';
// Defined with the key handles, which loadKeys (below this table) checks it for too.
import { KEY_BACKEND_MAX_TIMEOUT_MS, KEY_BACKEND_TIMEOUT_MS } from '../keys/backend.js';
import { PEER_SHARE_PERCENT } from '../base/connection-guard.js';
// Named here, though only kinds.ts uses them, so that the emitted type of OPTIONS names them
// from their modules: else the compiler reaches them through an entry point, and every
// declaration that reads the table drags in the whole public API (test/package/entry-points).
// biome-ignore lint/correctness/noUnusedImports: named so that table.d.ts imports it from its module (above)
import type { KeySet } from '../keys/key-set.js';
import { PKCS11_MODULE_DIRS } from '../keys/backends/pkcs11-custody.js';
// biome-ignore lint/correctness/noUnusedImports: as KeySet
import type { CallInterceptor } from '../contracts/handler-api.js';
// biome-ignore lint/correctness/noUnusedImports: as KeySet
import type { JwtPolicy } from '../policy/document.js';

/**
 * Which interface an option belongs to; `cli` options exist only on the command line, and
 * `http2` ones are the tuning of jwt-grpc's own HTTP/2 server (src/transport/http2/options.ts),
 * which createJwtServer leaves at their defaults.
 */
export type OptionGroup = 'keys' | 'service' | 'transport' | 'server' | 'cluster' | 'cli' | 'http2';

/** How the command line gives an option. */
export interface CliSpec {
  /** The flag without its dashes; absent for an option given only by its environment variable. */
  readonly flag?: string;
  /** The environment twin. */
  readonly env: string;
  /** The flag turns the option off: `--no-health` sets `health` to false. */
  readonly negate?: true;
  /** The command line names a file holding the value (a JWK Set, a JSON array), read at start. */
  readonly file?: true;
}

/** One row of the table; `D` is the default's type, `undefined` when the option has none. */
export interface OptionRow<G extends OptionGroup = OptionGroup, K extends AnyKind = AnyKind, D = unknown> {
  readonly group: G;
  readonly kind: K;
  readonly default?: D;
  /** How documentation writes a default that is not a plain value ("never", "ephemeral keys"). */
  readonly defaultText?: string;
  /** What the option does, in one line (for --help); a boolean's starts with a verb. */
  readonly help: string;
  readonly cli?: CliSpec;
}

// The table holds kinds of every value type; `any` lets one row type hold them all.
// biome-ignore lint/suspicious/noExplicitAny: as the line above says
type AnyKind = OptionKind<any, any>;

/** The type of a value of kind `K` as code gives it. */
export type InOf<K> = K extends OptionKind<infer In, infer _Out> ? In : never;

/** Types a row: the default must be a value of the option's kind. */
function option<const G extends OptionGroup, K extends AnyKind, const D extends InOf<K> | undefined = undefined>(
  row: OptionRow<G, K, D>,
): OptionRow<G, K, D> {
  return row;
}

/** The protocols the own transport serves on its gRPC port, each request by its content type (docs/protocols.md). */
export const PROTOCOLS = ['grpc', 'grpc-web', 'connect'] as const;

/** The gRPC servers createJwtServer can run on. */
export const TRANSPORTS = ['http2', 'grpc-js'] as const;

/** Ten years: the longest token lifetime accepted. */
const MAX_TTL_SECONDS = 10 * 365 * 86_400;
/**
 * The clock tolerance of every verifier (createVerifier, createRemoteVerifier and so
 * jwtAuthInterceptor, the service's VerifyJwt, RevokeJwt's expiry arithmetic, `keys rotate
 * --retire`'s wait): the leeway, in seconds, on `exp`, `nbf` and `iat`. A token is valid
 * until `exp + 5 s`, and one issued up to 5 s "in the future" by a clock ahead is accepted.
 *
 * Why 5 and not 0 or 60: jose, golang-jwt, PyJWT and node's jsonwebtoken default to no
 * leeway, which fails brand-new tokens (`iat` in the future) on a verifier whose clock lags
 * the issuer's by a fraction of a second. Envoy's jwt_authn and Rust's jsonwebtoken take
 * 60 s (Microsoft.IdentityModel 5 min), sized for issuers anywhere on the internet. The
 * issuer and the verifiers of jwt-grpc run in one deployment whose clocks NTP keeps within
 * milliseconds (chrony, systemd-timesyncd, a cloud's time service), so a few seconds cover
 * real skew while an expired token, or the tokens of a retired key, stop passing 5 s after
 * their time. Where clocks are not kept, give `clockToleranceSeconds` (0 to 300).
 */
export const CLOCK_TOLERANCE_SECONDS = 5;
/**
 * Status list indexes a process reserves at a time (`statusListBlockSize`): one store
 * write (an fsync, a Redis INCRBY, a worker's request to its primary) per 4096 tokens
 * keeps the store off the per-token path, while a process that exits leaves at most two
 * blocks, 8192 of the list's 2^20 entries (under 1%), unused.
 */
export const DEFAULT_INDEX_BLOCK = 4096;
/**
 * How long a call's request may take to arrive whole, from its HEADERS to the client's
 * END_STREAM, whatever grpc-timeout it sent (or none): past it the call is answered
 * DEADLINE_EXCEEDED and its stream reset, so a stream opened and never finished cannot hold
 * its share of the memory ceilings. nginx bounds each phase the same way
 * (client_header_timeout, client_body_timeout: 60 s between reads); a token request is a few
 * hundred bytes that a client sends in one write, so 10 s is thousands of round trips on a
 * slow link and still returns an abandoned stream's memory well before the 30 s stall bound.
 */
export const REQUEST_TIMEOUT_MS = 10_000;
/**
 * How long a connection may stay without an open stream before the server sends GOAWAY
 * NO_ERROR and closes it (grpc-go's MaxConnectionIdle, infinite by default there). An idle
 * connection holds a descriptor and a slot of maxConnections: 60 s, as AWS's load balancers
 * close idle connections (nginx: keepalive_timeout 75 s), returns a forgotten or attacking
 * connection's slot within a minute, while a client that calls at least once a minute keeps
 * its connection, and one that calls less reconnects (gRPC clients do so on GOAWAY
 * NO_ERROR without failing a call). Client PINGs are not activity.
 */
export const MAX_CONNECTION_IDLE_MS = 60_000;
/**
 * How long a connection lives before the server sends GOAWAY NO_ERROR (±10 %, gRFC A9),
 * then maxConnectionAgeGraceMs for the calls in flight (grpc-go's MaxConnectionAge,
 * infinite by default there). A connection kept busy (a Watch stream, a steady trickle of
 * calls) holds its slot no longer than this; 30 minutes costs each client one handshake per
 * half hour and spreads clients over cluster workers and replicas after a scale-up.
 */
export const MAX_CONNECTION_AGE_MS = 30 * 60_000;
/**
 * SETTINGS_MAX_CONCURRENT_STREAMS advertised and enforced (RFC 9113 §5.1.2: past it,
 * REFUSED_STREAM). 1,024 streams at their full cost, 4 KiB each plus a full 16 KiB header
 * list on the own transport (20 MiB), or 16 KiB each on grpc-js (16 MiB), fit the 64 MiB
 * per-connection ceiling, so a stream the SETTINGS allow is refused for memory only when
 * messages or waiting answers fill it. Go's net/http2 server advertises 250, nginx 128;
 * 1,024 leaves a benchmark client at -c 1000 over one connection unrefused.
 */
export const MAX_CONCURRENT_STREAMS = 1024;
/** setTimeout's longest delay (2^31 - 1 ms); a longer one fires at once, so longer durations are refused. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const OPTIONS = {
  // createJwtServer, addJwtService: the keys (checked where given, never resolved with the rest).
  keys: option({
    group: 'keys',
    kind: signingKeys,
    defaultText: 'ephemeral keys, with a warning',
    help: 'the signing keys (on the command line, a JWK Set file)',
    cli: { flag: 'keys', env: 'JWT_GRPC_KEYS', file: true },
  }),

  // JwtService (addJwtService, createJwtServer)
  subjects: option({
    group: 'service',
    kind: strings,
    help: 'subjects handed out round robin when a request names none (on the command line, a JSON array file)',
    cli: { flag: 'subjects', env: 'JWT_GRPC_SUBJECTS', file: true },
  }),
  policy: option({
    group: 'service',
    kind: policyKind,
    defaultText: 'open: any caller may get any token',
    help: 'which caller (client certificate) may get which tokens; a JSON file (docs/policy.md)',
    cli: { flag: 'policy', env: 'JWT_GRPC_POLICY', file: true },
  }),
  bindTokens: option({
    group: 'service',
    kind: flag,
    default: false,
    help: "binds every token to the caller's client certificate (cnf x5t#S256, RFC 8705); a call without one is refused",
    cli: { flag: 'bind-tokens', env: 'JWT_GRPC_BIND_TOKENS' },
  }),
  jti: option({
    group: 'service',
    kind: flag,
    default: true,
    help: 'put a random jti (128 bits, base64url) in every token, the id RevokeJwt names it by (tokens issued under a policy carry one all the same)',
    cli: { flag: 'no-jti', env: 'JWT_GRPC_NO_JTI', negate: true },
  }),
  verifyIssued: option({
    group: 'service',
    kind: flag,
    default: false,
    help: "verifies every token GenerateJwt signs before answering (INTERNAL if it does not verify), as the benchmark's peers do: the reference's equal work, a verify's cost per call",
    cli: { flag: 'verify-issued', env: 'JWT_GRPC_VERIFY_ISSUED' },
  }),
  issuer: option({
    group: 'service',
    kind: text('ISSUER'),
    help: 'iss claim of every token',
    cli: { flag: 'issuer', env: 'JWT_GRPC_ISSUER' },
  }),
  defaultTtlSeconds: option({
    group: 'service',
    kind: integer(1, MAX_TTL_SECONDS, 'SECONDS'),
    default: 7200,
    help: 'token lifetime when the request gives no ttl_seconds; never above the longest lifetime, which lowers the default',
    cli: { flag: 'ttl', env: 'JWT_GRPC_TTL' },
  }),
  maxTtlSeconds: option({
    group: 'service',
    kind: integer(1, MAX_TTL_SECONDS, 'SECONDS'),
    default: 86_400,
    help: 'longest lifetime a request may ask for',
    cli: { flag: 'max-ttl', env: 'JWT_GRPC_MAX_TTL' },
  }),
  clockToleranceSeconds: option({
    group: 'service',
    kind: integer(0, 300),
    default: CLOCK_TOLERANCE_SECONDS,
    help: 'leeway for exp, nbf and iat when verifying',
  }),
  keyBackendTimeoutMs: option({
    group: 'service',
    kind: integer(1, KEY_BACKEND_MAX_TIMEOUT_MS, 'MS'),
    default: KEY_BACKEND_TIMEOUT_MS,
    help: 'how long GenerateJwt waits for an HSM or KMS key to sign (or to open, at start too) before answering UNAVAILABLE',
    cli: { flag: 'key-backend-timeout-ms', env: 'JWT_GRPC_KEY_BACKEND_TIMEOUT_MS' },
  }),
  maxTokenLength: option({
    group: 'service',
    kind: integer(64, 1 << 20),
    default: 8192,
    help: 'longest token VerifyJwt accepts, in characters',
  }),
  maxSubjectLength: option({
    group: 'service',
    kind: integer(1, 65_536),
    default: 1024,
    help: 'longest subject or audience, in characters',
  }),
  maxClaimsJsonBytes: option({
    group: 'service',
    kind: integer(2, 1 << 20),
    default: 4096,
    help: 'longest claims_json, in bytes (this also bounds its nesting)',
  }),
  verifyCache: option({
    group: 'service',
    kind: cacheSize(10_000_000),
    default: { maxEntries: 10_000 },
    help: 'entries of the VerifyJwt cache of verified tokens; 0 (or false) turns it off',
    cli: { flag: 'verify-cache', env: 'JWT_GRPC_VERIFY_CACHE' },
  }),
  logger: option({
    group: 'service',
    kind: logger,
    defaultText: 'stderr, warnings and errors',
    help: 'where log lines go: { info, warn, error }; silentLogger drops them',
  }),

  // Transport (createJwtServer)
  maxReceiveMessageBytes: option({
    group: 'transport',
    kind: integer(1024, 64 << 20, 'BYTES'),
    default: 65_536,
    help: 'larger requests get RESOURCE_EXHAUSTED before any parsing',
  }),
  maxConnectionAgeMs: option({
    group: 'transport',
    kind: integer(1000, MAX_TIMER_MS, 'MS'),
    default: MAX_CONNECTION_AGE_MS,
    help: 'close client connections after this long (±10 %, GOAWAY, then a grace for calls in flight) so no connection holds its slot for ever and clients rebalance over workers',
    cli: { flag: 'max-connection-age-ms', env: 'JWT_GRPC_MAX_CONNECTION_AGE_MS' },
  }),
  maxConnectionAgeGraceMs: option({
    group: 'transport',
    kind: integer(0, MAX_TIMER_MS, 'MS'),
    // grpc-go's and grpc-js's usual setting, on both transports.
    default: 30_000,
    help: 'after maxConnectionAgeMs, how long calls in flight on the connection may finish before they are cancelled',
    cli: { flag: 'max-connection-age-grace-ms', env: 'JWT_GRPC_MAX_CONNECTION_AGE_GRACE_MS' },
  }),
  maxConnectionIdleMs: option({
    group: 'transport',
    kind: integer(1000, MAX_TIMER_MS, 'MS'),
    default: MAX_CONNECTION_IDLE_MS,
    help: 'close a connection (GOAWAY NO_ERROR) that has had no open stream for this long; client pings do not count',
    cli: { flag: 'max-connection-idle-ms', env: 'JWT_GRPC_MAX_CONNECTION_IDLE_MS' },
  }),
  requestTimeoutMs: option({
    group: 'transport',
    kind: integer(100, MAX_TIMER_MS, 'MS'),
    default: REQUEST_TIMEOUT_MS,
    help: "a call's request must arrive whole (HEADERS to END_STREAM) within this long, whatever its grpc-timeout; else it is answered DEADLINE_EXCEEDED and its stream reset",
    cli: { flag: 'request-timeout-ms', env: 'JWT_GRPC_REQUEST_TIMEOUT_MS' },
  }),
  maxProcessStreamMemoryMb: option({
    group: 'transport',
    kind: integer(1, 1 << 20, 'MB'),
    // Four connections at their own ceiling (maxConnectionMemoryMb, 64), or ~65,000 calls in
    // flight at 4 KiB each, far above what a token service serves at once; with its reserve
    // (a quarter more, for clients that read) it still fits a 512 MiB container beside the
    // ~75 MiB a server starts with.
    default: 256,
    help: 'memory all connections of the process may hold for their calls (open streams, request bytes, answers waiting for flow-control window); past it new streams are refused on connections whose answers wait, and on every connection a quarter above it',
  }),
  maxFlowControlStallMs: option({
    group: 'transport',
    kind: integer(10, MAX_TIMER_MS, 'MS'),
    // A client that reads grants window within a round trip, and a GC pause or a congested
    // link stalls it for seconds; 30 s is far above both, and returns what a client that
    // never reads pins within half a minute (grpc-go and grpc-js give calls the same
    // 30 s grace after a connection's age).
    default: 30_000,
    help: 'close a connection (GOAWAY ENHANCE_YOUR_CALM) whose answers have waited this long for flow-control window with none of their bytes sent',
  }),
  transport: option({
    group: 'transport',
    kind: choice(TRANSPORTS),
    default: 'http2',
    help: "the gRPC server: jwt-grpc's own HTTP/2, or @grpc/grpc-js",
    cli: { flag: 'transport', env: 'JWT_GRPC_TRANSPORT' },
  }),
  handshakeTimeoutMs: option({
    group: 'transport',
    kind: integer(100, 600_000, 'MS'),
    // As the discovery port had it; Node's own default, 120 s for TLS and none for the
    // HTTP/2 preface, let silent sockets hold descriptors for minutes.
    default: 10_000,
    help: 'a new connection must finish its TLS handshake and send the HTTP/2 preface and SETTINGS (on the metrics and discovery ports, and HTTP/1.1 on the gRPC port: its request head) within this long, or it is closed',
    cli: { flag: 'handshake-timeout-ms', env: 'JWT_GRPC_HANDSHAKE_TIMEOUT_MS' },
  }),
  maxConnections: option({
    group: 'transport',
    kind: integer(1, 10_000_000),
    defaultText: 'the open-files limit less 400 (at least half of it), else 10000',
    help: 'open gRPC connections per server (per cluster worker); past it a new connection is closed as it is accepted, and a warning logged',
    cli: { flag: 'max-connections', env: 'JWT_GRPC_MAX_CONNECTIONS' },
  }),
  peerSharePercent: option({
    group: 'transport',
    kind: integer(1, 100, 'PERCENT'),
    // PEER_SHARE_PERCENT (src/base/connection-guard.ts) says why a quarter.
    default: PEER_SHARE_PERCENT,
    help: "the share of each port's connection cap (gRPC, metrics, discovery) and of maxProcessStreamMemoryMb that the connections of one client address (IPv6: one /64) may hold, in percent; 100 turns the shares off (behind a load balancer that hides client addresses)",
    cli: { flag: 'peer-share-percent', env: 'JWT_GRPC_PEER_SHARE_PERCENT' },
  }),
  channelOptions: option({
    group: 'transport',
    kind: record<ChannelOptions>(),
    help: "extra grpc-js server options (transport grpc-js only); they override jwt-grpc's own",
  }),
  protocols: option({
    group: 'transport',
    kind: choices(PROTOCOLS),
    defaultText: 'grpc, grpc-web, connect (transport grpc-js: grpc)',
    help: 'the protocols served on the gRPC port, chosen per request by its content type (docs/protocols.md); grpc-web and connect need transport http2',
    cli: { flag: 'protocols', env: 'JWT_GRPC_PROTOCOLS' },
  }),
  corsAllowedOrigins: option({
    group: 'transport',
    kind: origins,
    defaultText: 'none (CORS off)',
    help: 'web origins whose pages may call the gRPC-Web and Connect protocols from a browser (CORS); any other origin gets no CORS header',
    cli: { flag: 'cors-origins', env: 'JWT_GRPC_CORS_ORIGINS' },
  }),

  // createJwtServer's extras
  health: option({
    group: 'server',
    kind: flag,
    default: true,
    help: 'serve grpc.health.v1.Health',
    cli: { flag: 'no-health', env: 'JWT_GRPC_NO_HEALTH', negate: true },
  }),
  interceptors: option({
    group: 'server',
    kind: interceptors,
    defaultText: 'none',
    help: 'run around every call of every service, in order (metrics, auth, logging)',
  }),
  reflection: option({
    group: 'server',
    kind: flag,
    default: true,
    help: 'serve gRPC server reflection',
    cli: { flag: 'no-reflection', env: 'JWT_GRPC_NO_REFLECTION', negate: true },
  }),
  metricsPort: option({
    group: 'server',
    kind: integer(0, 65_535, 'PORT'),
    defaultText: 'off',
    help: 'serve Prometheus metrics at http://HOST:PORT/metrics, HOST as the server binds; 0 = any free port (in cluster mode the primary serves the sum over its workers)',
    cli: { flag: 'metrics-port', env: 'JWT_GRPC_METRICS_PORT' },
  }),
  httpPort: option({
    group: 'server',
    kind: integer(0, 65_535, 'PORT'),
    defaultText: 'off',
    help: 'serve OpenID discovery and the JWK Set at http(s)://HTTP_HOST:PORT/.well-known/ (needs issuer; TLS as the gRPC port); 0 = any free port',
    cli: { flag: 'http-port', env: 'JWT_GRPC_HTTP_PORT' },
  }),
  httpHost: option({
    group: 'server',
    kind: text('HOST'),
    defaultText: 'as the server binds',
    help: 'address the discovery port binds',
    cli: { flag: 'http-host', env: 'JWT_GRPC_HTTP_HOST' },
  }),
  httpMaxAgeSeconds: option({
    group: 'server',
    kind: integer(0, 86_400, 'SECONDS'),
    default: 300,
    help: 'Cache-Control max-age of the discovery documents; publish a staged key longer than this before it signs',
    cli: { flag: 'http-max-age', env: 'JWT_GRPC_HTTP_MAX_AGE' },
  }),
  statusList: option({
    group: 'server',
    kind: flag,
    default: false,
    help: 'puts a Token Status List index in every token (status claim) and serves the signed lists at ISSUER/statuslists/N (a full one rolls over to the next) and over GetStatusList (needs issuer, http-port, and revocations or revocation-store to keep its index counter)',
    cli: { flag: 'status-list', env: 'JWT_GRPC_STATUS_LIST' },
  }),
  statusListTtlSeconds: option({
    group: 'server',
    kind: integer(1, 86_400, 'SECONDS'),
    default: 60,
    help: "the status list's ttl: how long verifiers cache it, so how late they may learn of a revocation",
    cli: { flag: 'status-list-ttl', env: 'JWT_GRPC_STATUS_LIST_TTL' },
  }),
  statusListBlockSize: option({
    group: 'server',
    kind: integer(8, 65_536, 'N'),
    default: DEFAULT_INDEX_BLOCK,
    help: 'status list indexes a process reserves at a time (one write to the index store each); a process that dies leaves at most twice this many unused',
    cli: { flag: 'status-list-block', env: 'JWT_GRPC_STATUS_LIST_BLOCK' },
  }),
  revocations: option({
    group: 'server',
    kind: text('FILE'),
    defaultText: 'in memory only',
    help: "append-only file that keeps revocations across restarts, fsync'd before RevokeJwt answers (docs/revocation.md)",
    cli: { flag: 'revocations', env: 'JWT_GRPC_REVOCATIONS' },
  }),
  revocationStore: option({
    group: 'server',
    kind: revocationStore,
    defaultText: 'none',
    help: 'where every replica shares its revocations: redis://HOST:PORT or rediss://... (instead of --revocations; docs/revocation.md)',
    cli: { flag: 'revocation-store', env: 'JWT_GRPC_REVOCATION_STORE' },
  }),
  adminTokenFile: option({
    group: 'server',
    kind: text('FILE'),
    defaultText: 'none',
    help: 'file holding the admin secret (at least 16 characters) a RevokeJwt caller sends as authorization: Bearer SECRET',
    cli: { flag: 'admin-token-file', env: 'JWT_GRPC_ADMIN_TOKEN_FILE' },
  }),
  trustFile: option({
    group: 'server',
    kind: text('FILE'),
    defaultText: 'none',
    help: "JSON file naming the issuers whose tokens ExchangeToken and POST /token on the http-port exchange for this server's (RFC 8693, docs/token-exchange.md)",
    cli: { flag: 'trust-file', env: 'JWT_GRPC_TRUST_FILE' },
  }),
  metricsRegistry: option({
    group: 'server',
    kind: metricsRegistry,
    help: "a prom-client Registry to count into instead of jwt-grpc's own, served by you (or at metricsPort)",
  }),
  tracing: option({
    group: 'server',
    kind: tracing,
    default: false,
    help: 'trace every call with OpenTelemetry (exported as the OTEL_* variables say), or into your TracerProvider',
    cli: { flag: 'otel', env: 'JWT_GRPC_OTEL' },
  }),

  // runCluster
  workers: option({
    group: 'cluster',
    kind: workerCount(1024),
    default: 1,
    help: 'processes serving the port: 1 = this one, N > 1 = a primary and N workers, max = one per core',
    cli: { env: 'NODEMAXPROCS' },
  }),
  graceMs: option({
    group: 'cluster',
    kind: integer(0, 600_000, 'MS'),
    default: 10_000,
    help: 'on SIGTERM, how long calls in flight may finish',
    cli: { flag: 'grace-ms', env: 'JWT_GRPC_GRACE_MS' },
  }),
  maxQuickRestarts: option({
    group: 'cluster',
    kind: integer(1, 1000),
    default: 5,
    help: 'quick consecutive crashes of one worker slot after which the cluster stops',
  }),
  spareWorker: option({
    group: 'cluster',
    kind: flag,
    default: true,
    help: "keep one more worker started, keys in hand, not accepting: a dead worker's slot is served again at once (costs one idle worker's memory)",
    cli: { flag: 'no-spare-worker', env: 'JWT_GRPC_NO_SPARE_WORKER', negate: true },
  }),
  handleSignals: option({
    group: 'cluster',
    kind: flag,
    default: true,
    help: 'drain on SIGTERM/SIGINT, force on the second; reload the keys on SIGHUP',
  }),

  // jwt-grpc's own HTTP/2 server (createHttp2GrpcServer). Sources: the gRPC over HTTP/2
  // protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md), doc/keepalive.md (https://github.com/grpc/grpc/blob/master/doc/keepalive.md), gRFC A8 (https://github.com/grpc/proposal/blob/master/A8-client-side-keepalive.md) (keepalive, its server enforcement) and
  // A9 (https://github.com/grpc/proposal/blob/master/A9-server-side-connection-management.md) (server-side connection management).
  maxHeaderListBytes: option({
    group: 'http2',
    kind: integer(1024, 1 << 24, 'BYTES'),
    // The protocol document suggests servers limit request headers, 8 KiB by default; 16 KiB
    // leaves room for large authorization metadata.
    default: 16 * 1024,
    help: 'largest request header list (SETTINGS_MAX_HEADER_LIST_SIZE); a larger request is reset with ENHANCE_YOUR_CALM',
  }),
  maxConcurrentStreams: option({
    group: 'http2',
    kind: integer(1, 2 ** 32 - 1),
    default: MAX_CONCURRENT_STREAMS,
    help: 'concurrent calls per connection (SETTINGS_MAX_CONCURRENT_STREAMS, advertised and enforced); past it a new stream is refused (REFUSED_STREAM)',
  }),
  maxConnectionMemoryMb: option({
    group: 'http2',
    kind: integer(1, 1 << 16, 'MB'),
    default: 64,
    help: 'memory a connection may hold, its open streams (4 KiB each plus their headers), request messages not yet whole and answers waiting for flow-control window; past it new streams are refused and the stream whose DATA crosses it is reset',
  }),
  keepaliveTimeMs: option({
    group: 'http2',
    kind: integer(10, MAX_TIMER_MS, 'MS'),
    default: 2 * 60 * 60 * 1000,
    help: 'ping each connection this long after the last ping was acknowledged; close it when a ping goes unanswered (A8/A9)',
  }),
  keepaliveTimeoutMs: option({
    group: 'http2',
    kind: integer(10, MAX_TIMER_MS, 'MS'),
    default: 20_000,
    help: 'how long a keepalive ping waits for its ack before the connection is closed',
  }),
  keepalivePermitTimeMs: option({
    group: 'http2',
    kind: integer(0, MAX_TIMER_MS, 'MS'),
    default: 5 * 60 * 1000,
    help: 'shortest interval between client pings tolerated (A8 enforcement)',
  }),
  keepalivePermitWithoutCalls: option({
    group: 'http2',
    kind: flag,
    default: false,
    help: 'tolerate client pings at keepalivePermitTimeMs also while no call is in flight (else every 2 hours)',
  }),
  maxPingStrikes: option({
    group: 'http2',
    kind: integer(0, 1000),
    default: 2,
    help: 'early client pings tolerated before the connection is closed (GOAWAY ENHANCE_YOUR_CALM, too_many_pings)',
  }),

  // The command line only
  host: option({
    group: 'cli',
    kind: text('HOST'),
    default: '0.0.0.0',
    help: 'address to bind',
    cli: { flag: 'host', env: 'JWT_GRPC_HOST' },
  }),
  port: option({
    group: 'cli',
    kind: integer(0, 65_535, 'PORT'),
    default: 50_051,
    help: 'port to bind, 0 = any free port',
    cli: { flag: 'port', env: 'JWT_GRPC_PORT' },
  }),
  tlsCert: option({
    group: 'cli',
    kind: text('FILE'),
    help: 'PEM certificate chain: serve TLS (with --tls-key)',
    cli: { flag: 'tls-cert', env: 'JWT_GRPC_TLS_CERT' },
  }),
  tlsKey: option({
    group: 'cli',
    kind: text('FILE'),
    help: 'PEM private key of --tls-cert',
    cli: { flag: 'tls-key', env: 'JWT_GRPC_TLS_KEY' },
  }),
  tlsClientCa: option({
    group: 'cli',
    kind: text('FILE'),
    help: 'PEM CA bundle: require client certificates (mutual TLS)',
    cli: { flag: 'tls-client-ca', env: 'JWT_GRPC_TLS_CLIENT_CA' },
  }),
  watchKeys: option({
    group: 'cli',
    kind: flag,
    default: false,
    help: 'reload the --keys and --policy files when they change (rewritten, renamed over, or a Kubernetes Secret update), as SIGHUP does',
    cli: { flag: 'watch-keys', env: 'JWT_GRPC_WATCH_KEYS' },
  }),
  pkcs11ModuleDirs: option({
    group: 'cli',
    kind: directories,
    default: PKCS11_MODULE_DIRS,
    help: "the directories a key file's PKCS#11 module-path may name (each module and every directory above it owned by root or this user, writable by no one else)",
    cli: { flag: 'pkcs11-module-dirs', env: 'JWT_GRPC_PKCS11_MODULE_DIRS' },
  }),
  exitWithParent: option({
    group: 'cli',
    kind: flag,
    // Off: a server outlives the shell or script that started it (nohup, setsid); one run by npx follows npx anyway (src/cli/parent-watch.ts).
    default: false,
    help: 'stop (draining, as SIGTERM does) when the process that started this one exits; a server run by npx or npm exec always does',
    cli: { flag: 'exit-with-parent', env: 'JWT_GRPC_EXIT_WITH_PARENT' },
  }),
  logFormat: option({
    group: 'cli',
    kind: choice(['text', 'json']),
    default: 'text',
    help: 'log lines as text, or as JSON objects (one per line: time, level, pid, worker, message, fields)',
    cli: { flag: 'log-format', env: 'JWT_GRPC_LOG_FORMAT' },
  }),
  logLevel: option({
    group: 'cli',
    kind: choice(['info', 'warn', 'error']),
    default: 'info',
    help: 'the lowest level logged',
    cli: { flag: 'log-level', env: 'JWT_GRPC_LOG_LEVEL' },
  }),
};

export type Options = typeof OPTIONS;
export type OptionName = keyof Options;
