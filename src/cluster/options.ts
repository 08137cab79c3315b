import type { ServerCredentials } from '@grpc/grpc-js';
import { invalidOption } from '../errors.js';
import type { KeySet } from '../keys/key-set.js';
import { type Logger, createStderrLogger } from '../log.js';
import type { JwtServerOptions } from '../server/create.js';

/** Options of {@link runCluster}. The same script runs in the primary and in every worker. */
export interface ClusterOptions {
  /** Worker processes; 1 = serve from this process. Usually `parseNodeMaxProcs(process.env.NODEMAXPROCS)`. */
  readonly workers: number;
  /** `host:port` every worker serves on (one port, shared through node:cluster). */
  readonly address: string;
  /** Options of each worker's server (everything but keys and logger). */
  readonly server?: Omit<JwtServerOptions, 'keys' | 'logger'>;
  /** Loads the keys once, in the primary; workers receive them over IPC. Default: ephemeral keys. */
  readonly keys?: () => Promise<KeySet>;
  /** Makes each server's credentials (called in each worker). Default: plaintext. */
  readonly credentials?: () => ServerCredentials | Promise<ServerCredentials>;
  readonly logger?: Logger;
  /** How long a SIGTERM lets calls in flight finish before forcing. Default 10000. */
  readonly graceMs?: number;
  /** Drain on SIGTERM/SIGINT, force on the second. Default true. */
  readonly handleSignals?: boolean;
  /** Quick consecutive crashes of one worker slot after which the primary gives up. Default 5. */
  readonly maxQuickRestarts?: number;
}

/** @internal */
export interface ResolvedClusterOptions extends Required<Omit<ClusterOptions, 'keys' | 'credentials' | 'server'>> {
  readonly keys: (() => Promise<KeySet>) | undefined;
  readonly credentials: (() => ServerCredentials | Promise<ServerCredentials>) | undefined;
  readonly server: Omit<JwtServerOptions, 'keys' | 'logger'>;
}

/** @internal */
export function resolveClusterOptions(options: ClusterOptions): ResolvedClusterOptions {
  if (!Number.isInteger(options.workers) || options.workers < 1 || options.workers > 1024) {
    throw invalidOption('workers', `must be an integer from 1 to 1024, got ${options.workers}`);
  }
  if (typeof options.address !== 'string' || !options.address.includes(':')) {
    throw invalidOption('address', `must be host:port, got ${JSON.stringify(options.address)}`);
  }
  const graceMs = options.graceMs ?? 10_000;
  if (!Number.isInteger(graceMs) || graceMs < 0) throw invalidOption('graceMs', `must be a non-negative integer, got ${graceMs}`);
  const maxQuickRestarts = options.maxQuickRestarts ?? 5;
  if (!Number.isInteger(maxQuickRestarts) || maxQuickRestarts < 1) {
    throw invalidOption('maxQuickRestarts', `must be a positive integer, got ${maxQuickRestarts}`);
  }
  return {
    workers: options.workers,
    address: options.address,
    server: options.server ?? {},
    keys: options.keys,
    credentials: options.credentials,
    logger: options.logger ?? createStderrLogger('info'),
    graceMs,
    handleSignals: options.handleSignals ?? true,
    maxQuickRestarts,
  };
}
