import cluster from 'node:cluster';
import { checkWorkersFit } from './fit.js';
import type { ClusterHandle } from './handle.js';
import { type ClusterOptions, resolveClusterOptions } from './options.js';
import { runPrimary } from './primary.js';
import { runSingle } from './single.js';
import { runWorker } from './worker.js';
import { hostOf } from '../metrics/http.js';
import { warnAdminSecretOnPlaintext } from '../server/plaintext-admin.js';

export type { ClusterHandle } from './handle.js';
export type { ClusterOptions } from './options.js';

/**
 * Serves JwtService on `options.address` from `options.workers` processes: one = this
 * process; more = a primary (this process), which binds the port and hands each connection
 * to a worker, and that many node:cluster workers. The script that calls this runs again in every worker, where this call becomes
 * the worker's part. Keys are loaded once, in the primary, and handed to the workers, so
 * a token made by any worker verifies on every worker; so is the issuance policy (option
 * `policy`), so every worker enforces the same one, before and after a reload.
 *
 * Note that the primary balances connections, not calls: one HTTP/2 client connection
 * is served by one worker. Use at least as many client connections as workers; long-lived
 * clients also rebalance when their connection reaches `server.maxConnectionAgeMs` (default
 * 30 minutes).
 *
 * @example
 * ```ts
 * import { parseNodeMaxProcs, runCluster } from 'jwt-grpc/cluster';
 * import { loadKeys } from 'jwt-grpc/keys';
 *
 * const handle = await runCluster({
 *   workers: parseNodeMaxProcs(process.env.NODEMAXPROCS),
 *   address: '0.0.0.0:50051',
 *   keys: () => loadKeys('keys.json'),
 * });
 * process.exitCode = await handle.done; // after SIGTERM has drained every worker
 * ```
 */
export function runCluster(options: ClusterOptions): Promise<ClusterHandle> {
  const resolved = resolveClusterOptions(options);
  if (cluster.isWorker) return runWorker(resolved);
  checkWorkersFit(resolved.workers, resolved.logger);
  if (resolved.workers === 1) return runSingle(resolved);
  return runPrimary(resolved).then((handle) => {
    // The workers' createJwtServer leaves this line to the primary, which says it once.
    if (resolved.server.adminTokenFile !== undefined && resolved.tls === undefined)
      warnAdminSecretOnPlaintext(resolved.logger, hostOf(resolved.address), handle.port);
    return handle;
  });
}
