import { invalidOption } from '../base/errors.js';
import type { KeySet } from '../keys/key-set.js';
import type { JwtPolicy } from '../policy/document.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { type DeclaresGroup, type Expect, type ResolvedOptions, namesIn, optionValue, resolveGroups } from '../options/resolve.js';
import { type OptionNames, refuseUnknownOptions } from '../base/known-options.js';
import { type JwtServerOptions, SERVER_OPTION_NAMES, resolveServerOptions } from '../server/options.js';
import type { ServerTlsOptions } from '../contracts/handler-api.js';

/**
 * Options of {@link runCluster}. The same script runs in the primary and in every worker.
 *
 * @example
 * ```ts
 * const options: ClusterOptions = { workers: 4, address: '0.0.0.0:50051', keys: () => loadKeys('keys.json'), graceMs: 5000 };
 * await runCluster(options);
 * ```
 */
export interface ClusterOptions {
  /**
   * Worker processes, 1 to 1024; 1 = serve from this process. Usually
   * `parseNodeMaxProcs(process.env.NODEMAXPROCS)`. Default 1.
   */
  readonly workers?: number;
  /** `host:port` every worker serves on (one port, which the primary binds and hands each connection of to a worker). */
  readonly address: string;
  /** Options of each worker's server (everything but keys and logger). */
  readonly server?: Omit<JwtServerOptions, 'keys' | 'logger'>;
  /** Loads the keys once, in the primary; workers receive them over IPC. Default: ephemeral keys. */
  readonly keys?: () => Promise<KeySet>;
  /**
   * Loads the issuance policy (e.g. `() => loadPolicy('policy.json')`) once, in the
   * primary, which hands it to every worker over IPC; reloaded with the keys on SIGHUP.
   * Instead of `server.policy`, which is fixed for the server's life. Default: none.
   */
  readonly policy?: () => Promise<JwtPolicy>;
  /** Makes each server's TLS options (called in each worker). Default: plaintext. */
  readonly tls?: () => ServerTlsOptions | Promise<ServerTlsOptions>;
  /** Where the cluster's and the servers' log lines go. Default: stderr, info lines too. */
  readonly logger?: Logger;
  /** How long a SIGTERM lets calls in flight finish before forcing, 0 to 600000 ms. Default 10000. */
  readonly graceMs?: number;
  /** Drain on SIGTERM/SIGINT, force on the second; reload the keys and the policy on SIGHUP (with `keys`, `policy`). Default true. */
  readonly handleSignals?: boolean;
  /** Quick consecutive crashes of one worker slot after which the primary gives up, 1 to 1000. Default 5. */
  readonly maxQuickRestarts?: number;
  /**
   * With 2 workers or more: one more worker process, started once every worker listens, with
   * its modules loaded and the keys imported but accepting nothing, takes a dead worker's
   * slot at once (a new spare is started behind it). Costs one idle worker's memory. Default true.
   */
  readonly spareWorker?: boolean;
}

/** The names runCluster reads itself, beside the cluster rows of the option table. */
const CLUSTER_OWN_NAMES: OptionNames = ['address', 'server', 'keys', 'policy', 'tls', 'logger'];
/** The names {@link ClusterOptions} holds: the cluster rows of the option table and the code-only members. @internal */
export const CLUSTER_OPTION_NAMES: OptionNames = [...namesIn('cluster'), ...CLUSTER_OWN_NAMES];

/** The names of `server`: a server's options but the keys and the logger, which are the cluster's own. */
const CLUSTER_SERVER_OPTION_NAMES: OptionNames = SERVER_OPTION_NAMES.filter((name) => name !== 'keys' && name !== 'logger');

// A compile error here: ClusterOptions' value options (all but the code-only ones) and
// the option table (src/options/table.ts) disagree on names or types.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never read
type ClusterMatchesTable = Expect<
  DeclaresGroup<Omit<ClusterOptions, 'address' | 'server' | 'keys' | 'policy' | 'tls' | 'logger'>, 'cluster'>
>;

/** @internal */
export interface ResolvedClusterOptions extends ResolvedOptions<'cluster'> {
  readonly address: string;
  readonly server: Omit<JwtServerOptions, 'keys' | 'logger'>;
  readonly keys: (() => Promise<KeySet>) | undefined;
  readonly policy: (() => Promise<JwtPolicy>) | undefined;
  readonly tls: (() => ServerTlsOptions | Promise<ServerTlsOptions>) | undefined;
  readonly logger: Logger;
}

function optionalFunction<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw invalidOption(name, 'must be a function');
  return value;
}

/** @internal */
export function resolveClusterOptions(options: ClusterOptions): ResolvedClusterOptions {
  const { cluster: resolved } = resolveGroups(['cluster'], options, { owner: 'runCluster', also: CLUSTER_OWN_NAMES });
  if (typeof options.address !== 'string' || !options.address.includes(':')) {
    throw invalidOption('address', `must be host:port, got ${JSON.stringify(options.address)}`);
  }
  const server = options.server ?? {};
  refuseUnknownOptions(server, CLUSTER_SERVER_OPTION_NAMES, {
    path: 'server',
    owner: 'runCluster',
    elsewhere: (name) => (name === 'keys' || name === 'logger' ? `give it as runCluster's own ${name}` : undefined),
  });
  // Checked here too, in the primary: a bad server option then stops the start once,
  // instead of failing in every worker the primary keeps respawning.
  resolveServerOptions(server, { label: (name) => `server.${name}` });
  const policy = optionalFunction('policy', options.policy);
  if (policy !== undefined && server.policy !== undefined)
    throw invalidOption('policy', 'give the policy loader or server.policy, not both');
  return {
    ...resolved,
    address: options.address,
    server,
    keys: optionalFunction('keys', options.keys),
    policy,
    tls: optionalFunction('tls', options.tls),
    logger: optionValue('logger', options.logger) ?? createStderrLogger({ level: 'info' }),
  };
}
