import type { ChannelOptions } from '@grpc/grpc-js';
import type { TRANSPORTS } from '../options/table.js';
import type { CallInterceptor } from '../contracts/handler-api.js';
import type { ProtocolName } from '../transport/protocols/wire.js';
import type { TracerProvider } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { RevocationStore } from '../contracts/revocation-store.js';
import { invalidOption } from '../base/errors.js';
import type { KeySet } from '../keys/key-set.js';
import {
  type DeclaresGroup,
  type Expect,
  type GroupsReading,
  type Label,
  type ResolvedOptions,
  libraryLabel,
  namesIn,
  resolveGroups,
} from '../options/resolve.js';
import type { OptionNames } from '../base/known-options.js';
import { issuerPath } from '../discovery/documents.js';
import { checkStoreOptions } from '../revocation/open.js';
import { type JwtServiceOptions, type ResolvedServiceOptions, serviceRules } from '../jwt-service/options.js';

/**
 * The gRPC servers createJwtServer runs on: its own, HTTP/2 framed on node:net (default), or @grpc/grpc-js.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const transport: Transport = process.env.USE_GRPC_JS ? 'grpc-js' : 'http2';
 * const server = createJwtServer({ keys, transport });
 * ```
 */
export type Transport = (typeof TRANSPORTS)[number];

/**
 * The transport options a JwtServer exposes; everything grpc-js-specific is named here, once.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const transport: TransportOptions = { maxReceiveMessageBytes: 16 * 1024, maxConnectionAgeMs: 60_000 };
 * const server = createJwtServer({ ...transport, keys });
 * ```
 */
export interface TransportOptions {
  /**
   * The gRPC server: `'http2'`, jwt-grpc's own, HTTP/2 framed on node:net (the lean one, see
   * bench/PERFORMANCE.md), or `'grpc-js'`, a @grpc/grpc-js `Server`. Default http2.
   */
  readonly transport?: Transport;
  /** Largest request accepted, 1024 to 67108864 bytes; larger ones get RESOURCE_EXHAUSTED before any parsing. Default 65536. */
  readonly maxReceiveMessageBytes?: number;
  /**
   * Close each client connection after this long, 1000 ms to 2^31 - 1, jittered ±10 %
   * (GOAWAY, then a 30 s grace for calls in flight), so no connection holds its slot for
   * ever and long-lived clients reconnect and spread over cluster workers. Default 1800000
   * (30 minutes).
   */
  readonly maxConnectionAgeMs?: number;
  /**
   * After maxConnectionAgeMs, how long calls in flight on the connection may finish before
   * they are cancelled, 0 to 2^31 - 1 ms. Default 30000.
   */
  readonly maxConnectionAgeGraceMs?: number;
  /**
   * Close a connection (GOAWAY NO_ERROR) that has had no open stream for this long, 1000 ms
   * to 2^31 - 1; client pings are not activity. Default 60000.
   */
  readonly maxConnectionIdleMs?: number;
  /**
   * How long a call's request may take to arrive whole (its HEADERS to the client's
   * END_STREAM), 100 ms to 2^31 - 1, whatever grpc-timeout the client sent: past it the
   * call is answered DEADLINE_EXCEEDED and its stream reset, releasing what it held. A
   * client-streaming or bidi call must end its request side within it too. Default 10000.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Memory all connections of the process may hold for their calls, MB (1 to 1048576):
   * open streams, request bytes not yet whole, answers waiting for the client's
   * flow-control window. Shared by every server of the process (each cluster worker has
   * its own). Past it, new streams are refused (REFUSED_STREAM) on connections whose
   * answers wait for window, and on every connection a quarter above it. Default 256.
   */
  readonly maxProcessStreamMemoryMb?: number;
  /**
   * Close a connection (GOAWAY ENHANCE_YOUR_CALM) whose answers have waited this long for
   * the client's flow-control window with none of their bytes sent, 10 ms to 2^31 - 1: a
   * client that never reads cannot pin memory. Default 30000.
   */
  readonly maxFlowControlStallMs?: number;
  /**
   * How long a new connection has, 100 to 600000 ms, to finish its TLS handshake and send
   * the HTTP/2 preface and first SETTINGS (plaintext: the preface and SETTINGS); on the
   * metrics and discovery ports, its request head. One deadline from the TCP accept; a
   * connection that misses it is closed and counted. Default 10000.
   */
  readonly handshakeTimeoutMs?: number;
  /**
   * Open gRPC connections the server keeps (each cluster worker its own), 1 to 10000000:
   * past it a new connection is closed as it is accepted, before any TLS work, and a
   * warning is logged (at most every 10 s); the limit is read where Linux tells it.
   * Default: the open-files limit less 400 (at least half of it), else 10000.
   */
  readonly maxConnections?: number;
  /**
   * The share, 1 to 100 percent, of each port's connection cap (gRPC, metrics, discovery)
   * and of `maxProcessStreamMemoryMb` that the connections of one client address may hold
   * (an IPv6 address counts by its /64): past it that address's new connections are closed
   * as they are accepted, and its new streams refused (REFUSED_STREAM), while other
   * addresses keep theirs. Each address may hold 4 connections whatever the share of a
   * small cap. Behind a load balancer that hides client addresses every connection has the
   * balancer's address: set 100 (no share) and let the balancer limit its clients.
   * Default 25.
   */
  readonly peerSharePercent?: number;
  /** Extra grpc-js server options, transport 'grpc-js' only; they override jwt-grpc's own. Default: none. */
  readonly channelOptions?: ChannelOptions;
  /**
   * The protocols the gRPC port serves, each request by its content type
   * (docs/protocols.md): `grpc`, `grpc-web` (`application/grpc-web*`), `connect`
   * (`application/proto`, `application/json`, `application/connect+*`, GET for the methods
   * without side effects). Transport 'grpc-js' serves grpc only.
   * Default: grpc, grpc-web, connect (transport grpc-js: grpc).
   */
  readonly protocols?: readonly ProtocolName[];
  /**
   * Web origins (`https://app.example`) whose pages may call gRPC-Web and Connect from a
   * browser: their preflights are answered and their answers carry CORS headers. Any other
   * origin gets none, and its preflight 403. Transport 'http2' only. Default: none (CORS off).
   */
  readonly corsAllowedOrigins?: readonly string[];
}

/**
 * Options of {@link createJwtServer}: the service's, the transport's, and the extras.
 *
 * @example
 * ```ts
 * const options: JwtServerOptions = { subjects: ['ada@example.com'], health: true, reflection: false };
 * await using server = createJwtServer(options);
 * ```
 */
export interface JwtServerOptions extends Omit<JwtServiceOptions, 'keys'>, TransportOptions {
  /** Keys to use. Default: one ephemeral key per algorithm, generated at listen and logged as a warning. */
  readonly keys?: KeySet;
  /** Serve grpc.health.v1.Health. Default true. */
  readonly health?: boolean;
  /** Serve gRPC server reflection. Default true. */
  readonly reflection?: boolean;
  /**
   * Run around every call of every service the server carries, in order, on either
   * transport (metrics, auth, logging; see `CallInterceptor`). Default: none.
   */
  readonly interceptors?: readonly CallInterceptor[];
  /**
   * Serve Prometheus metrics at `http://HOST:PORT/metrics` (HOST as `listen` binds, 0 picks
   * a free port): calls by method and status code, tokens, verifications, keys, and the
   * process's own metrics. Default: off (no metric is counted and no port opened).
   */
  readonly metricsPort?: number;
  /**
   * Serve OpenID Connect discovery (`/.well-known/openid-configuration`) and the public JWK
   * Set (`/.well-known/jwks.json`) over HTTP on this port (0 picks a free one), with
   * `/healthz` and `/readyz`; HTTPS when `listen` gets TLS. Needs `issuer`, an http(s) URL.
   * Default: off.
   */
  readonly httpPort?: number;
  /** Address the discovery port binds. Default: as the server binds (the host `listen` binds). */
  readonly httpHost?: string;
  /**
   * `Cache-Control: public, max-age=N` of the discovery documents, 0 to 86400 seconds.
   * Publish a staged key longer than this (plus verifiers' refetch cooldown) before it signs. Default 300.
   */
  readonly httpMaxAgeSeconds?: number;
  /**
   * Token Status List (draft-ietf-oauth-status-list-20, docs/status-list.md): every token
   * gets a `status` claim with its own entry in a list at `ISSUER/statuslists/N` (a full
   * list rolls over to the next, and retires once its tokens have expired), served
   * signed (`statuslist+jwt`, with an asymmetric key) on the HTTP port and by
   * GetStatusList, so remote verifiers learn of revocations without calling the issuer.
   * Needs `issuer`, `httpPort`, and `revocations` or `revocationStore`, which keep its
   * index counter across restarts. Default false.
   */
  readonly statusList?: boolean;
  /**
   * The status list's `ttl`, 1 to 86400 seconds: verifiers cache the list this long, so it
   * bounds how late a remote verifier learns of a revocation. Default 60: a revocation is
   * more urgent than a key rollover (`httpMaxAgeSeconds`, 300), and the list is small.
   */
  readonly statusListTtlSeconds?: number;
  /**
   * Status list indexes a process reserves at a time, 8 to 65536: one write to the index
   * store (the revocations file's fsync, a Redis INCRBY, a cluster worker's request to its
   * primary) per block, and at most twice this many indexes left unused by a process that
   * exits (the block in use and the next one). Default 4096.
   */
  readonly statusListBlockSize?: number;
  /**
   * An append-only file that keeps revocations (RevokeJwt) across restarts: each is
   * appended and fsync'd before RevokeJwt answers, and the file is compacted as entries
   * expire (format: docs/revocation.md). In a cluster the primary owns it. Default: in memory only.
   */
  readonly revocations?: string;
  /**
   * Where every replica shares its revocations: a `redis://` or `rediss://` URL, or a
   * `RevocationStore` of your own (src/contracts/revocation-store.ts); instead of `revocations`. Default: none.
   */
  readonly revocationStore?: string | RevocationStore;
  /**
   * A file holding the admin secret (at least 16 characters, read at listen): a RevokeJwt
   * call that sends `authorization: Bearer SECRET` may revoke. Without it (and without
   * `revokers` in the policy) RevokeJwt answers PERMISSION_DENIED. Default: none.
   */
  readonly adminTokenFile?: string;
  /**
   * A trust file (JSON, schema `JWT_TRUST_SCHEMA`, read at listen): the issuers whose tokens
   * ExchangeToken, and `POST /token` on the `httpPort`, take and exchange for this server's
   * own (RFC 8693, docs/token-exchange.md). A file that breaks the schema fails `listen`,
   * naming the file, the JSON path and the problem. Without it, ExchangeToken answers
   * FAILED_PRECONDITION and the HTTP port serves no token endpoint. Default: none.
   */
  readonly trustFile?: string;
  /**
   * A prom-client `Registry` to count into instead of jwt-grpc's own, for a service that
   * serves its own `/metrics` (one server per registry: the metric names are fixed).
   * Default: none (with metricsPort, jwt-grpc's own registry).
   */
  readonly metricsRegistry?: Registry;
  /**
   * Trace every call with OpenTelemetry, on either transport: a SERVER span per call
   * (parent from `traceparent` or `grpc-trace-bin`) with `jwt.sign` and `jwt.verify`
   * children; handlers run with that span active. `true` exports over OTLP (HTTP or gRPC)
   * as the `OTEL_*` variables configure it (the SDK and exporter are optional dependencies,
   * loaded then), its queue bounded by `OTEL_BSP_MAX_QUEUE_SIZE` and drops counted; a
   * TracerProvider sends the spans into your own pipeline. Default false: no tracing work at all.
   */
  readonly tracing?: boolean | TracerProvider;
}

/**
 * The names {@link JwtServerOptions} holds, from the option table (whose rows the
 * interfaces are checked against below) and `keys`. @internal
 */
export const SERVER_OPTION_NAMES: OptionNames = ['keys', ...namesIn('service'), ...namesIn('transport'), ...namesIn('server')];

// A compile error on these two lines: the interfaces above and the option table
// (src/options/table.ts) disagree on the names or types of options.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never read
type TransportMatchesTable = Expect<DeclaresGroup<TransportOptions, 'transport'>>;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never read
type ServerMatchesTable = Expect<DeclaresGroup<Omit<JwtServerOptions, keyof JwtServiceOptions | keyof TransportOptions>, 'server'>>;

/** Whether a `revocationStore` keeps the status-list index counter: a Redis URL does, a store of your own with `reserveStatusIndexes`. */
function keepsStatusIndexes(store: string | RevocationStore | undefined): boolean {
  return typeof store === 'string' || typeof store?.reserveStatusIndexes === 'function';
}

/**
 * grpc-js serves gRPC only: its HTTP/2 server is its own, and it hands jwt-grpc no request
 * that is not a gRPC call. A protocol or CORS option that asks for more is refused, naming why.
 */
function checkProtocolsOnTransport(transport: ResolvedOptions<'transport'>, label: Label): void {
  if (transport.transport !== 'grpc-js') return;
  const extra = transport.protocols?.filter((protocol) => protocol !== 'grpc') ?? [];
  if (extra.length > 0) {
    throw invalidOption(
      label('protocols'),
      `${extra.join(' and ')} ${extra.length === 1 ? 'needs' : 'need'} transport 'http2': grpc-js cannot share its HTTP/2 server with other protocols; this server runs on 'grpc-js'`,
    );
  }
  if ((transport.corsAllowedOrigins?.length ?? 0) > 0) {
    throw invalidOption(label('corsAllowedOrigins'), "CORS serves the browser protocols (grpc-web, connect), which need transport 'http2'");
  }
}

/** createJwtServer's options once validated, keys aside. @internal */
export interface ResolvedServerOptions {
  readonly service: ResolvedServiceOptions;
  readonly transport: ResolvedOptions<'transport'>;
  readonly server: ResolvedOptions<'server'>;
}

/**
 * A server's options but the keys, read in one pass through the option table (unknown names
 * refused, each option checked, defaults filled in: {@link resolveGroups}), then the rules
 * across options; errors name an option as `reading.label` gives it. createJwtServer calls
 * it, and so do runCluster (in the primary, before any worker starts) and the CLI (naming
 * its flags). @internal
 */
export function resolveServerOptions(options: Omit<JwtServerOptions, 'keys'>, reading: GroupsReading = {}): ResolvedServerOptions {
  const label = reading.label ?? libraryLabel;
  const groups = resolveGroups(['service', 'transport', 'server'], options, { also: ['keys'], ...reading });
  const { transport, server } = groups;
  if (transport.channelOptions !== undefined && transport.transport !== 'grpc-js') {
    throw invalidOption(label('channelOptions'), `applies to transport 'grpc-js' only; this server runs on '${transport.transport}'`);
  }
  checkProtocolsOnTransport(transport, label);
  const service = serviceRules(groups.service, options, label);
  // Discovery without the issuer the tokens carry would mislead every verifier: refuse to start.
  if (server.httpPort !== undefined) issuerPath(service.issuer, label('issuer'));
  // Verifiers fetch the list at its uri (section 8.1), which lives on the discovery port.
  if (server.statusList && server.httpPort === undefined) {
    throw invalidOption(
      label('statusList'),
      `needs ${label('httpPort')}: verifiers fetch the status lists over HTTP at ISSUER/statuslists/N`,
    );
  }
  checkStoreOptions(server, label);
  // Indexes that could repeat after a restart would mark the wrong tokens revoked: the counter must be durable.
  if (server.statusList && server.revocations === undefined && !keepsStatusIndexes(server.revocationStore)) {
    throw invalidOption(
      label('statusList'),
      `needs ${label('revocations')} or ${label('revocationStore')}: a store that keeps the status list's index counter, ` +
        'so that no index is handed out twice after a restart (docs/status-list.md)',
    );
  }
  return { service, transport, server };
}
