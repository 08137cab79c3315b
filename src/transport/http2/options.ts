import { invalidOption } from '../../errors.js';
import { type Logger, createStderrLogger } from '../../log.js';
import { type ServerInterceptor, checkInterceptors } from '../handler-api.js';
import {
  DEFAULT_KEEPALIVE_PERMIT_TIME_MS,
  DEFAULT_KEEPALIVE_TIME_MS,
  DEFAULT_KEEPALIVE_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_STREAMS,
  DEFAULT_MAX_CONNECTION_AGE_GRACE_MS,
  DEFAULT_MAX_CONNECTION_AGE_MS,
  DEFAULT_MAX_HEADER_LIST_BYTES,
  DEFAULT_MAX_PING_STRIKES,
  DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
  DEFAULT_MAX_SESSION_MEMORY_MB,
} from './defaults.js';

/** Options of {@link createHttp2GrpcServer}; every one has a default (`./defaults.ts`). */
export interface Http2GrpcServerOptions {
  /** Largest request message, compressed and decompressed; larger ones get RESOURCE_EXHAUSTED unread. Default 65536. */
  readonly maxReceiveMessageBytes?: number;
  /** Largest request header list (HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE); larger requests are reset. Default 16384. */
  readonly maxHeaderListBytes?: number;
  /** Concurrent calls per connection (SETTINGS_MAX_CONCURRENT_STREAMS). Default 2^32 - 1. */
  readonly maxConcurrentStreams?: number;
  /**
   * Memory a connection may hold, MB: its open streams (~2 KiB each plus their headers)
   * and request messages not yet whole. Past it new streams are refused (REFUSED_STREAM)
   * and the stream whose DATA crosses it is reset (ENHANCE_YOUR_CALM). Default 64.
   */
  readonly maxSessionMemoryMb?: number;
  /** Ping each connection this often; close it when a ping goes unanswered. Default 2 hours. */
  readonly keepaliveTimeMs?: number;
  /** How long a keepalive ping waits for its ack. Default 20000. */
  readonly keepaliveTimeoutMs?: number;
  /** Shortest interval between client pings tolerated. Default 300000 (5 minutes). */
  readonly keepalivePermitTimeMs?: number;
  /** Tolerate client pings at that interval also while no call is in flight. Default false (then: 2 hours). */
  readonly keepalivePermitWithoutCalls?: boolean;
  /** Early client pings tolerated before the connection is closed (GOAWAY ENHANCE_YOUR_CALM). Default 2. */
  readonly maxPingStrikes?: number;
  /** Close each connection gracefully after this long, jittered ±10 %. Default: never. */
  readonly maxConnectionAgeMs?: number;
  /** After its age, calls in flight on a connection get this long before they are cancelled. Default: unbounded. */
  readonly maxConnectionAgeGraceMs?: number;
  /** Run around every call, in order (metrics, auth). Default none. */
  readonly interceptors?: readonly ServerInterceptor[];
  /** Where handler failures and connection problems are logged. Default: stderr, warnings and errors. */
  readonly logger?: Logger;
}

/** Options after validation, every default filled in. @internal */
export interface ResolvedHttp2Options {
  readonly maxReceiveMessageBytes: number;
  readonly maxHeaderListBytes: number;
  readonly maxConcurrentStreams: number;
  readonly maxSessionMemoryMb: number;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly keepalivePermitTimeMs: number;
  readonly keepalivePermitWithoutCalls: boolean;
  readonly maxPingStrikes: number;
  readonly maxConnectionAgeMs: number;
  readonly maxConnectionAgeGraceMs: number;
  readonly interceptors: readonly ServerInterceptor[];
  readonly logger: Logger;
}

/** Node's timers take at most 2^31 - 1 ms; longer durations are refused rather than silently clamped. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw invalidOption(name, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return resolved;
}

/** A duration that may also be infinite (the default of the connection-age options). */
function duration(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined && fallback === Number.POSITIVE_INFINITY) return fallback;
  return integer(name, value, fallback, min, MAX_TIMER_MS);
}

/** Validates every option once, at creation; errors name the option. @internal */
export function resolveHttp2Options(options: Http2GrpcServerOptions): ResolvedHttp2Options {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object');
  const interceptors = checkInterceptors(options.interceptors);
  const permitWithoutCalls = options.keepalivePermitWithoutCalls ?? false;
  if (typeof permitWithoutCalls !== 'boolean') throw invalidOption('keepalivePermitWithoutCalls', 'must be a boolean');
  const logger = options.logger ?? createStderrLogger();
  if (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function' || typeof logger.warn !== 'function') {
    throw invalidOption('logger', 'must have info, warn and error methods');
  }
  return {
    maxReceiveMessageBytes: integer('maxReceiveMessageBytes', options.maxReceiveMessageBytes, DEFAULT_MAX_RECEIVE_MESSAGE_BYTES, 1024, 1 << 30),
    maxHeaderListBytes: integer('maxHeaderListBytes', options.maxHeaderListBytes, DEFAULT_MAX_HEADER_LIST_BYTES, 1024, 1 << 24),
    maxConcurrentStreams: integer('maxConcurrentStreams', options.maxConcurrentStreams, DEFAULT_MAX_CONCURRENT_STREAMS, 1, 2 ** 32 - 1),
    maxSessionMemoryMb: integer('maxSessionMemoryMb', options.maxSessionMemoryMb, DEFAULT_MAX_SESSION_MEMORY_MB, 1, 1 << 16),
    keepaliveTimeMs: integer('keepaliveTimeMs', options.keepaliveTimeMs, DEFAULT_KEEPALIVE_TIME_MS, 10, MAX_TIMER_MS),
    keepaliveTimeoutMs: integer('keepaliveTimeoutMs', options.keepaliveTimeoutMs, DEFAULT_KEEPALIVE_TIMEOUT_MS, 10, MAX_TIMER_MS),
    keepalivePermitTimeMs: integer('keepalivePermitTimeMs', options.keepalivePermitTimeMs, DEFAULT_KEEPALIVE_PERMIT_TIME_MS, 0, MAX_TIMER_MS),
    keepalivePermitWithoutCalls: permitWithoutCalls,
    maxPingStrikes: integer('maxPingStrikes', options.maxPingStrikes, DEFAULT_MAX_PING_STRIKES, 0, 1000),
    maxConnectionAgeMs: duration('maxConnectionAgeMs', options.maxConnectionAgeMs, DEFAULT_MAX_CONNECTION_AGE_MS, 100),
    maxConnectionAgeGraceMs: duration('maxConnectionAgeGraceMs', options.maxConnectionAgeGraceMs, DEFAULT_MAX_CONNECTION_AGE_GRACE_MS, 0),
    interceptors,
    logger,
  };
}
