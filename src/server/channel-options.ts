import type { ChannelOptions } from '@grpc/grpc-js';
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
