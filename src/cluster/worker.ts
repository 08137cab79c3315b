import { promClient } from '../optional-deps.js';
import { JwtGrpcError } from '../errors.js';
import { importKeys } from '../keys/import.js';
import { describeKeys } from '../keys/reload.js';
import { workerMetricsJson } from '../metrics/cluster.js';
import type { ClusterHandle } from './handle.js';
import { type InProcessServer, listenInProcess } from './in-process.js';
import { type PrimaryMessage, type WorkerMessage, isPrimaryMessage } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';
import { PrimaryRelayStore } from './revocations.js';

function send(message: WorkerMessage): void {
  process.send?.(message, undefined, undefined, () => undefined);
}

type KeysMessage = Extract<PrimaryMessage, { type: 'jwt-grpc:keys' }>;

/**
 * A cluster worker: waits for the keys from the primary, runs exactly the
 * single-process server, swaps in the keys the primary reloads, answers its metrics
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
  const relay = new PrimaryRelayStore(start.revocations, send);
  // Counted here, served by the primary: the primary sums its workers' metrics.
  const registry = options.server.metricsPort === undefined ? undefined : new (promClient().Registry)();
  let listening: InProcessServer | undefined;
  let reloaded: KeysMessage | undefined;
  const swapIn = (server: InProcessServer, message: KeysMessage): void => {
    try {
      server.server.service.setKeys(importKeys(message.jwks));
      logger.info(`worker ${process.pid} reloaded keys`, { keys: describeKeys(server.server.service.keys) });
      send({ type: 'jwt-grpc:keys-applied', generation: message.generation });
    } catch (err) {
      const error = err instanceof JwtGrpcError ? err.message : String(err);
      send({ type: 'jwt-grpc:keys-applied', generation: message.generation, error });
    }
  };
  // Listening from the start: keys reloaded while this worker binds are swapped in once it listens.
  process.on('message', (message: unknown) => {
    if (!isPrimaryMessage(message)) return;
    if (message.type === 'jwt-grpc:revoked') {
      relay.receive(message.revocations);
    } else if (message.type === 'jwt-grpc:revoke-done') {
      relay.settle(message.id, message.error);
    } else if (message.type === 'jwt-grpc:keys') {
      if (listening === undefined) reloaded = message;
      else swapIn(listening, message);
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
    metricsPort: undefined,
    httpPort: server.server.httpPort,
    servingPids: () => [process.pid],
    close: () => close(),
    done,
  };
}
