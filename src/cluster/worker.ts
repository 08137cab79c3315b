import { promClient } from '../optional-deps.js';
import { JwtGrpcError } from '../errors.js';
import { importKeys } from '../keys/import.js';
import { describeKeys } from '../keys/reload.js';
import { workerMetricsJson } from '../metrics/cluster.js';
import { describePolicy } from '../policy/reload.js';
import type { ClusterHandle } from './handle.js';
import { type InProcessServer, listenInProcess } from './in-process.js';
import { type PrimaryMessage, type WorkerMessage, isPrimaryMessage } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';
import type { ReserveIndexes } from '../revocation/status-list/allocator.js';
import { PrimaryRelayStore } from './revocations.js';

function send(message: WorkerMessage): void {
  process.send?.(message, undefined, undefined, () => undefined);
}

/** A block of status list indexes must come back from the primary within this long. */
const RESERVE_TIMEOUT_MS = 10_000;

/** Status list index blocks reserved by the primary, which alone counts them for all workers. */
function primaryReserve(): ReserveIndexes {
  let nextId = 0;
  return (count) =>
    new Promise<number>((resolve, reject) => {
      const id = ++nextId;
      const done = (): void => {
        clearTimeout(timer);
        process.off('message', onMessage);
      };
      const onMessage = (message: unknown): void => {
        if (!isPrimaryMessage(message) || message.type !== 'jwt-grpc:status-indexes' || message.id !== id) return;
        done();
        if (message.first === undefined) reject(new JwtGrpcError('ERR_CLUSTER', `the primary reserved no status list indexes: ${message.error ?? 'no reason given'}`));
        else resolve(message.first);
      };
      const timer = setTimeout(() => {
        done();
        reject(new JwtGrpcError('ERR_CLUSTER', `the primary did not reserve status list indexes within ${RESERVE_TIMEOUT_MS} ms`));
      }, RESERVE_TIMEOUT_MS);
      process.on('message', onMessage);
      send({ type: 'jwt-grpc:reserve-status-indexes', id, count });
    });
}

type KeysMessage = Extract<PrimaryMessage, { type: 'jwt-grpc:keys' }>;
type PolicyMessage = Extract<PrimaryMessage, { type: 'jwt-grpc:policy' }>;

function problem(err: unknown): string {
  return err instanceof JwtGrpcError ? err.message : String(err);
}

/**
 * A cluster worker: waits for the keys from the primary, runs exactly the
 * single-process server, swaps in the keys and the policy the primary reloads, answers its metrics
 * requests, and drains when the primary says so. @internal
 */
export async function runWorker(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  const { logger } = options;
  // Ctrl-C and a terminal's hang-up reach the whole process group; the primary decides what they do.
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});

  const start = await new Promise<Extract<PrimaryMessage, { type: 'jwt-grpc:start' }>>((resolve) => {
    const onMessage = (message: unknown): void => {
      if (isPrimaryMessage(message) && message.type === 'jwt-grpc:start') {
        process.off('message', onMessage);
        resolve(message);
      }
    };
    process.on('message', onMessage);
    send({ type: 'jwt-grpc:hello' });
  });

  // The primary owns the revocation store; this worker's server reaches it through this relay.
  const relay = new PrimaryRelayStore(start.revocations, send, primaryReserve());
  // Counted here, served by the primary: the primary sums its workers' metrics.
  const registry = options.server.metricsPort === undefined ? undefined : new (promClient().Registry)();
  let listening: InProcessServer | undefined;
  let reloaded: KeysMessage | undefined;
  let reloadedPolicy: PolicyMessage | undefined;
  const swapIn = (server: InProcessServer, message: KeysMessage): void => {
    try {
      server.server.service.setKeys(importKeys(message.jwks));
      logger.info(`worker ${process.pid} reloaded keys`, { keys: describeKeys(server.server.service.keys) });
      send({ type: 'jwt-grpc:keys-applied', generation: message.generation });
    } catch (err) {
      send({ type: 'jwt-grpc:keys-applied', generation: message.generation, error: problem(err) });
    }
  };
  const swapInPolicy = (server: InProcessServer, message: PolicyMessage): void => {
    try {
      server.server.service.setPolicy(message.policy);
      logger.info(`worker ${process.pid} reloaded the policy`, describePolicy(message.policy, message.generation));
      send({ type: 'jwt-grpc:policy-applied', generation: message.generation });
    } catch (err) {
      send({ type: 'jwt-grpc:policy-applied', generation: message.generation, error: problem(err) });
    }
  };
  // Listening from the start: keys or a policy reloaded while this worker binds are swapped in once it listens.
  process.on('message', (message: unknown) => {
    if (!isPrimaryMessage(message)) return;
    if (message.type === 'jwt-grpc:revoked') {
      relay.receive(message.revocations);
    } else if (message.type === 'jwt-grpc:revoke-done') {
      relay.settle(message.id, message.error);
    } else if (message.type === 'jwt-grpc:keys') {
      if (listening === undefined) reloaded = message;
      else swapIn(listening, message);
    } else if (message.type === 'jwt-grpc:policy') {
      if (listening === undefined) reloadedPolicy = message;
      else swapInPolicy(listening, message);
    } else if (message.type === 'jwt-grpc:metrics-request' && registry !== undefined) {
      void workerMetricsJson(registry).then((metrics) => send({ type: 'jwt-grpc:metrics', id: message.id, metrics }));
    } else if (message.type === 'jwt-grpc:shutdown') {
      void listening?.close(message.graceMs);
    }
  });

  let server: InProcessServer;
  try {
    server = await listenInProcess(options, importKeys(start.jwks), {
      metricsPort: undefined,
      metricsRegistry: registry,
      ...(start.policy !== undefined && { policy: start.policy }),
      revocations: undefined,
      revocationStore: relay,
    });
  } catch (err) {
    if (!(err instanceof JwtGrpcError && err.code === 'ERR_LISTEN')) throw err;
    // The primary reports it, once, and stops the cluster; this worker only exits.
    process.send?.({ type: 'jwt-grpc:cannot-listen', message: err.message } satisfies WorkerMessage, undefined, undefined, () => process.exit(1));
    return new Promise<never>(() => {});
  }
  listening = server;
  if (reloaded !== undefined) swapIn(server, reloaded);
  if (reloadedPolicy !== undefined) swapInPolicy(server, reloadedPolicy);
  const { port, done, close } = server;
  // A worker told to stop directly, or orphaned by a dead primary, drains too.
  process.on('SIGTERM', () => void close());
  process.on('disconnect', () => void close());

  // Every worker serves the discovery port too (shared through node:cluster like the gRPC
  // port), from its own key set: the documents and their ETags agree without talking.
  send({ type: 'jwt-grpc:listening', port, httpPort: server.server.httpPort });
  return {
    role: 'worker',
    port,
    get keys() {
      return server.server.service.keys;
    },
    reloadKeys: () => Promise.reject(new JwtGrpcError('ERR_CLUSTER', 'reloadKeys: the primary reloads the keys of its workers')),
    get policy() {
      return server.server.service.policy;
    },
    reloadPolicy: () => Promise.reject(new JwtGrpcError('ERR_CLUSTER', 'reloadPolicy: the primary reloads the policy of its workers')),
    metricsPort: undefined,
    httpPort: server.server.httpPort,
    servingPids: () => [process.pid],
    close: () => close(),
    done,
  };
}
