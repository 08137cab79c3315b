import type { ChannelOptions, Server } from '@grpc/grpc-js';
import { type ResolvedOptions, optionValue } from '../options/resolve.js';
import type { GrpcJsMemoryLimits } from './grpc-js-memory.js';
import { peerMemoryShare } from '../base/connection-guard.js';
import { STREAM_RESET_BURST, STREAM_RESET_RATE } from '../transport/http2/defaults.js';

/** grpc-js server options for validated transport options. @internal */
export function serverChannelOptions(transport: ResolvedOptions<'transport'>): ChannelOptions {
  return {
    'grpc.max_receive_message_length': transport.maxReceiveMessageBytes,
    // Channelz keeps per-call statistics nobody reads unless a channelz service is
    // installed; off, it stops costing a share of every small unary call.
    'grpc.enable_channelz': 0,
    // node:http2's memory ceiling per connection, which grpc-js leaves unlimited: the same
    // as the own transport's (grpc-js-memory.ts adds the rest of that guard).
    'grpc-node.max_session_memory': optionValue('maxConnectionMemoryMb', undefined),
    // The same age and grace as the own HTTP/2 server's, from the option table
    // (grpc-js-deadlines.ts counts the closes). The idle bound is grpc-js-deadlines.ts's, not
    // grpc-js's `grpc.max_connection_idle_ms`, whose closes could not be counted.
    'grpc.max_connection_age_ms': transport.maxConnectionAgeMs,
    'grpc.max_connection_age_grace_ms': transport.maxConnectionAgeGraceMs,
    // Advertised in SETTINGS and enforced by nghttp2, as the own transport's (option table).
    'grpc.max_concurrent_streams': optionValue('maxConcurrentStreams', undefined),
    ...transport.channelOptions,
  };
}

/**
 * Options of node:http2's server that grpc-js (1.14) has no channel option for:
 * nghttp2's Rapid Reset guard, set as on jwt-grpc's own transport (see
 * src/transport/http2/defaults.ts and bench/PERFORMANCE.md, "HTTP/2 stream resets").
 * @internal
 */
export const HTTP2_SERVER_OPTIONS = { streamResetBurst: STREAM_RESET_BURST, streamResetRate: STREAM_RESET_RATE } as const;

/**
 * Adds {@link HTTP2_SERVER_OPTIONS} to a grpc-js Server before it binds: grpc-js hands
 * its (private) `commonServerOptions` to `http2.createServer`/`createSecureServer` at
 * bind time. Returns false, changing nothing, when that field is not there (a grpc-js
 * that works differently); test/reliability/disconnect.integration.test.ts notices.
 * @internal
 */
export function applyHttp2ServerOptions(server: Server): boolean {
  const internal = server as unknown as { commonServerOptions?: unknown };
  const common = internal.commonServerOptions;
  if (typeof common !== 'object' || common === null) return false;
  Object.assign(common, HTTP2_SERVER_OPTIONS);
  return true;
}

/**
 * The memory guards' limits on grpc-js (./grpc-js-memory.ts): the transport's options,
 * the per-connection ceiling's default, and one client address's share, as on the own transport.
 * @internal
 */
export function grpcJsMemoryLimits(transport: ResolvedOptions<'transport'>): GrpcJsMemoryLimits {
  return {
    maxConnectionBytes: optionValue('maxConnectionMemoryMb', undefined) * 1024 * 1024,
    maxProcessBytes: transport.maxProcessStreamMemoryMb * 1024 * 1024,
    maxPeerBytes: peerMemoryShare(transport.maxProcessStreamMemoryMb * 1024 * 1024, transport.peerSharePercent),
    maxStallMs: transport.maxFlowControlStallMs,
  };
}
