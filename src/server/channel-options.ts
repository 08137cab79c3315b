import type { ChannelOptions, Server } from '@grpc/grpc-js';
import { invalidOption } from '../errors.js';

/** The transport options a JwtServer exposes; everything grpc-js-specific is named here, once. */
export interface TransportOptions {
  /** Largest request accepted; larger ones get RESOURCE_EXHAUSTED before any parsing. Default 65536. */
  readonly maxReceiveMessageBytes?: number;
  /**
   * Close each client connection after this long (plus a grace period for calls in flight),
   * so long-lived clients reconnect and spread over cluster workers. Default: never.
   */
  readonly maxConnectionAgeMs?: number;
  /** Extra grpc-js server options; they override jwt-grpc's own. */
  readonly channelOptions?: ChannelOptions;
}

/** @internal */
export function serverChannelOptions(options: TransportOptions): ChannelOptions {
  const maxReceive = options.maxReceiveMessageBytes ?? 64 * 1024;
  if (!Number.isInteger(maxReceive) || maxReceive < 1024 || maxReceive > 64 * 1024 * 1024) {
    throw invalidOption('maxReceiveMessageBytes', `must be an integer from 1024 to 67108864, got ${maxReceive}`);
  }
  const age = options.maxConnectionAgeMs;
  if (age !== undefined && (!Number.isInteger(age) || age < 1000)) {
    throw invalidOption('maxConnectionAgeMs', `must be an integer of at least 1000, got ${age}`);
  }
  return {
    'grpc.max_receive_message_length': maxReceive,
    // Channelz keeps per-call statistics nobody reads unless a channelz service is
    // installed; off, it stops costing a share of every small unary call.
    'grpc.enable_channelz': 0,
    ...(age !== undefined && { 'grpc.max_connection_age_ms': age, 'grpc.max_connection_age_grace_ms': 30_000 }),
    ...options.channelOptions,
  };
}

/**
 * Options of node:http2's server that grpc-js (1.14) has no channel option for.
 *
 * `streamResetBurst` / `streamResetRate`: nghttp2's Rapid Reset (CVE-2023-44487) guard,
 * a token bucket of RST_STREAM frames received per connection, by default 1000 at once
 * and 33 a second after that. A gRPC client sends RST_STREAM for every call whose
 * deadline expires or that it cancels, so one client with more than 33 such calls a
 * second gets its whole connection killed (GOAWAY INTERNAL_ERROR), failing its healthy
 * calls in flight with `INTERNAL: Received RST_STREAM with code 2` (grpc-node#2872).
 * Measured (test/reliability/disconnect.test.ts, one connection, 16,000 HS256 calls,
 * half of them with a 1 ms deadline): with the defaults the connection was killed 5
 * times in 3.7 s and 1,000 of the 8,000 calls without a deadline failed; with these
 * values, none. The guard stays, above any rate calls alone reach: a unary call costs
 * this server more than a reset stream does, and it sets no concurrent-stream limit for
 * resets to get around, so a client resetting 10,000 streams a second could do more
 * harm by just sending the calls.
 * @internal
 */
export const HTTP2_SERVER_OPTIONS = { streamResetBurst: 10_000, streamResetRate: 10_000 } as const;

/**
 * Adds {@link HTTP2_SERVER_OPTIONS} to a grpc-js Server before it binds: grpc-js hands
 * its (private) `commonServerOptions` to `http2.createServer`/`createSecureServer` at
 * bind time. Returns false, changing nothing, when that field is not there (a grpc-js
 * that works differently); test/reliability/disconnect.test.ts notices.
 * @internal
 */
export function applyHttp2ServerOptions(server: Server): boolean {
  const internal = server as unknown as { commonServerOptions?: unknown };
  const common = internal.commonServerOptions;
  if (typeof common !== 'object' || common === null) return false;
  Object.assign(common, HTTP2_SERVER_OPTIONS);
  return true;
}
