/**
 * The options of jwt-grpc's own HTTP/2 server. The option table (src/options/table.ts)
 * holds every default and bound and validates them; this file only says which rows the
 * server takes: the `http2` group, and the transport options it shares with grpc-js.
 */
import { invalidOption } from '../../base/errors.js';
import { type Logger, createStderrLogger } from '../../base/log.js';
import { type DeclaresGroup, type Expect, type ResolvedOptions, optionValue, resolveOptions } from '../../options/resolve.js';
import type { ConnectionCounters } from '../../base/connection-guard.js';
import type { DeadlineCounters } from '../../base/peer-deadlines.js';
import type { CallInterceptor } from '../../contracts/handler-api.js';
import { PROTOCOLS } from '../../options/table.js';
import type { ProtocolName } from '../protocols/wire.js';

/** Options of {@link createHttp2GrpcServer}; each absent one takes its row's default in the option table. */
export interface Http2GrpcServerOptions {
  /** Largest request message, compressed and decompressed; larger ones get RESOURCE_EXHAUSTED unread. */
  readonly maxReceiveMessageBytes?: number;
  /** Largest request header list (HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE); larger requests are reset. */
  readonly maxHeaderListBytes?: number;
  /** Concurrent calls per connection (SETTINGS_MAX_CONCURRENT_STREAMS, advertised and enforced: more are refused REFUSED_STREAM). Default 1024. */
  readonly maxConcurrentStreams?: number;
  /**
   * Memory a connection may hold, MB: its open streams (4 KiB each plus their headers),
   * request messages not yet whole, and answers waiting for the client's flow-control
   * window. Past it new streams are refused (REFUSED_STREAM) and the stream whose DATA
   * crosses it is reset (ENHANCE_YOUR_CALM).
   */
  readonly maxConnectionMemoryMb?: number;
  /**
   * The same, summed over every connection of the process (both transports, every server),
   * MB. Past it new streams are refused on connections whose answers wait for window, and
   * on every connection a quarter above it. Default 256.
   */
  readonly maxProcessStreamMemoryMb?: number;
  /** Close a connection whose answers have waited this long for flow-control window with none of their bytes sent. Default 30000. */
  readonly maxFlowControlStallMs?: number;
  /** Ping each connection this often; close it when a ping goes unanswered. */
  readonly keepaliveTimeMs?: number;
  /** How long a keepalive ping waits for its ack. */
  readonly keepaliveTimeoutMs?: number;
  /** Shortest interval between client pings tolerated. */
  readonly keepalivePermitTimeMs?: number;
  /** Tolerate client pings at that interval also while no call is in flight (else: 2 hours). */
  readonly keepalivePermitWithoutCalls?: boolean;
  /** Early client pings tolerated before the connection is closed (GOAWAY ENHANCE_YOUR_CALM). */
  readonly maxPingStrikes?: number;
  /** Close each connection gracefully after this long, jittered ±10 %. Default 1800000 (30 minutes). */
  readonly maxConnectionAgeMs?: number;
  /** Close a connection (GOAWAY NO_ERROR) that has had no open stream this long; pings do not count. Default 60000. */
  readonly maxConnectionIdleMs?: number;
  /** A call's request must arrive whole (HEADERS to END_STREAM) within this long, else DEADLINE_EXCEEDED and reset. Default 10000. */
  readonly requestTimeoutMs?: number;
  /** After its age, how long calls in flight on a connection get before they are cancelled. */
  readonly maxConnectionAgeGraceMs?: number;
  /** How long a new connection has to finish TLS and send the preface and SETTINGS, ms. Default 10000. */
  readonly handshakeTimeoutMs?: number;
  /** Open connections kept; past it a new one is closed as it is accepted. Default: from the open-files limit, else 10000. */
  readonly maxConnections?: number;
  /**
   * The share of `maxConnections` and of `maxProcessStreamMemoryMb` one client address (IPv6:
   * its /64) may hold, percent; 100: no share (behind a load balancer). Default 25.
   */
  readonly peerSharePercent?: number;
  /** Where failed handshakes and refused connections are counted (createJwtServer's metrics). Default none. */
  readonly connectionCounters?: ConnectionCounters;
  /** Where requests timed out and connections closed idle or old are counted (createJwtServer's metrics). Default none. */
  readonly deadlineCounters?: DeadlineCounters;
  /** The protocols served, each request by its content type (docs/protocols.md). Default: grpc, grpc-web and connect. */
  readonly protocols?: readonly ProtocolName[];
  /** Web origins whose pages may call gRPC-Web and Connect from a browser (CORS). Default none. */
  readonly corsAllowedOrigins?: readonly string[];
  /** Run around every call, in order (metrics, auth). Default none. */
  readonly interceptors?: readonly CallInterceptor[];
  /** Where handler failures and connection problems are logged. Default: stderr, warnings and errors. */
  readonly logger?: Logger;
}

/** The options the server shares with createJwtServer's other groups. */
type SharedOptionNames =
  | 'maxReceiveMessageBytes'
  | 'maxConnectionAgeMs'
  | 'maxConnectionAgeGraceMs'
  | 'maxConnectionIdleMs'
  | 'requestTimeoutMs'
  | 'maxProcessStreamMemoryMb'
  | 'maxFlowControlStallMs'
  | 'handshakeTimeoutMs'
  | 'maxConnections'
  | 'peerSharePercent'
  | 'protocols'
  | 'corsAllowedOrigins'
  | 'interceptors'
  | 'logger'
  | 'connectionCounters'
  | 'deadlineCounters';

// A compile error here: Http2GrpcServerOptions and the table's `http2` rows disagree.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never read
type Http2MatchesTable = Expect<DeclaresGroup<Omit<Http2GrpcServerOptions, SharedOptionNames>, 'http2'>>;

/** Options after validation, every default filled in. @internal */
export interface ResolvedHttp2Options extends ResolvedOptions<'http2'> {
  readonly maxReceiveMessageBytes: number;
  readonly maxConnectionAgeMs: number;
  readonly maxConnectionAgeGraceMs: number;
  readonly maxConnectionIdleMs: number;
  readonly requestTimeoutMs: number;
  readonly maxProcessStreamMemoryMb: number;
  readonly maxFlowControlStallMs: number;
  readonly handshakeTimeoutMs: number;
  /** Undefined: derived from the open-files limit when the server is made. */
  readonly maxConnections: number | undefined;
  readonly peerSharePercent: number;
  readonly connectionCounters: ConnectionCounters | undefined;
  readonly deadlineCounters: DeadlineCounters | undefined;
  readonly protocols: ReadonlySet<ProtocolName>;
  readonly corsAllowedOrigins: ReadonlySet<string>;
  readonly interceptors: readonly CallInterceptor[];
  readonly logger: Logger;
}

/** Validates every option once, at creation, through the option table; errors name the option. @internal */
export function resolveHttp2Options(options: Http2GrpcServerOptions): ResolvedHttp2Options {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object');
  return {
    ...resolveOptions('http2', options),
    maxReceiveMessageBytes: optionValue('maxReceiveMessageBytes', options.maxReceiveMessageBytes),
    maxConnectionAgeMs: optionValue('maxConnectionAgeMs', options.maxConnectionAgeMs),
    maxConnectionAgeGraceMs: optionValue('maxConnectionAgeGraceMs', options.maxConnectionAgeGraceMs),
    maxConnectionIdleMs: optionValue('maxConnectionIdleMs', options.maxConnectionIdleMs),
    requestTimeoutMs: optionValue('requestTimeoutMs', options.requestTimeoutMs),
    maxProcessStreamMemoryMb: optionValue('maxProcessStreamMemoryMb', options.maxProcessStreamMemoryMb),
    maxFlowControlStallMs: optionValue('maxFlowControlStallMs', options.maxFlowControlStallMs),
    handshakeTimeoutMs: optionValue('handshakeTimeoutMs', options.handshakeTimeoutMs),
    maxConnections: optionValue('maxConnections', options.maxConnections),
    peerSharePercent: optionValue('peerSharePercent', options.peerSharePercent),
    connectionCounters: options.connectionCounters,
    deadlineCounters: options.deadlineCounters,
    protocols: new Set(optionValue('protocols', options.protocols) ?? PROTOCOLS),
    corsAllowedOrigins: new Set(optionValue('corsAllowedOrigins', options.corsAllowedOrigins) ?? []),
    interceptors: optionValue('interceptors', options.interceptors) ?? [],
    logger: optionValue('logger', options.logger) ?? createStderrLogger(),
  };
}
