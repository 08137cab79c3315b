/**
 * `jwt-grpc/cluster`: one JwtService on every core. {@link runCluster} forks workers that
 * share a port, restarts them with backoff, hands out reloaded keys and policy, and sums
 * their metrics; {@link parseNodeMaxProcs} reads the worker count a container gives.
 *
 * Apart from the server because a single-process server never needs a supervisor.
 *
 * @example
 * ```ts
 * import { runCluster } from 'jwt-grpc/cluster';
 *
 * const cluster = await runCluster({ address: '0.0.0.0:50051', workers: 4 });
 * process.on('SIGTERM', () => void cluster.close());
 * ```
 * @packageDocumentation
 * @module jwt-grpc/cluster
 */
export { runCluster, type ClusterOptions, type ClusterHandle } from '../cluster/run.js';
export { parseNodeMaxProcs } from '../cluster/max-procs.js';
