import type { Worker } from 'node:cluster';
import type { Registry } from 'prom-client';
import { promClient } from '../base/optional-deps.js';
import { ClusterMetrics } from '../metrics/cluster.js';
import { ConnectionMetrics } from '../metrics/connections.js';
import { optionValue } from '../options/resolve.js';
import { type MetricsEndpoint, hostOf, serveMetrics } from '../metrics/http.js';
import { ReloadMetrics, registerKeyGauge, registerStoreGauge } from '../metrics/jwt-service-metrics.js';
import { StateDistributor } from './distributor.js';
import { ClusterPortSet, type PortAddress } from './dispatcher.js';
import { cannotListen, parseAddress } from '../base/address.js';
import { cannotServe } from '../base/http-listen.js';
import { type ClusterHandle, onReloadSignal, onStopSignals } from './handle.js';
import type { HandedPortNumbers, WorkerMessage } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';
import { type HandlerTable, MessageRouter } from './router.js';
import { type ForkWorker, Supervisor, forkClusterWorker } from './supervisor.js';

/**
 * The cluster primary: loads keys and the policy once, binds the ports and hands each
 * connection to a worker (./dispatcher.ts), forks the workers, hands them the keys over IPC, respawns the ones that die with backoff,
 * gives up on a crash loop, and drains every worker on SIGTERM/SIGINT. Three parts: the
 * {@link Supervisor} (slots, fork, exit, backoff), the {@link StateDistributor} (keys,
 * policy, revocations, reloads) and a {@link MessageRouter} between them and the workers;
 * signals and metrics are wired here. @internal
 */
export async function runPrimary(options: ResolvedClusterOptions, fork: ForkWorker = forkClusterWorker): Promise<ClusterHandle> {
  const metrics = PrimaryMetrics.create(options);
  // The parts refer to each other through these closures, which run only once workers are forked.
  const live = (): Worker[] => supervisor.live();
  const state = await StateDistributor.load(options, live, { keys: metrics?.keyReloads, policy: metrics?.policyReloads });
  const held = await bindPorts(options).catch(async (err: unknown) => {
    await state.close();
    throw err;
  });
  const { workers, maxQuickRestarts, graceMs, logger, spareWorker } = options;
  const supervisor = new Supervisor({
    workers,
    spare: spareWorker,
    maxQuickRestarts,
    graceMs,
    logger,
    fork,
    forked: (worker) => {
      worker.on('message', (message: unknown) => router.route(message, worker));
      // Its process exited and its IPC channel closed, after its last message was read: the
      // connections it never adopted go to the others. Not 'disconnect': Node postpones it
      // while a handle it sent waits for its acknowledgement, which a dead worker never sends.
      worker.process.once('close', () => held.remove(worker));
    },
    exited: (worker) => state.exited(worker),
    // New connections are refused from the first stop on; the workers drain what they hold.
    stopping: () => held.close(),
  });
  const router = new MessageRouter(primaryHandlers(supervisor, state, held, metrics?.cluster), logger, (worker: Worker) => ({
    workerPid: worker.process.pid,
  }));
  metrics?.watch(state);
  await state.start();
  void supervisor.done.then(() => {
    held.close();
    return state.close();
  });
  supervisor.start();
  if (options.handleSignals) handleSignals(options, supervisor, state);
  await supervisor.ready;
  const endpoint = await metrics?.serve(options, supervisor);
  return primaryHandle(options, supervisor, state, held.numbers, endpoint);
}

/** What the primary does with each message a worker sends. */
function primaryHandlers(
  supervisor: Supervisor,
  state: StateDistributor,
  held: ClusterPortSet,
  metrics: ClusterMetrics | undefined,
): HandlerTable<WorkerMessage, Worker> {
  return {
    'jwt-grpc:hello': (_, worker) => state.hello(worker, held.numbers),
    'jwt-grpc:listening': (_, worker) => {
      supervisor.listening(worker);
      held.add(worker);
    },
    'jwt-grpc:adopted': (message, worker) => held.adopted(worker, message),
    'jwt-grpc:spare-ready': (_, worker) => supervisor.spareReady(worker),
    'jwt-grpc:cannot-listen': (message) => supervisor.cannotListen(message.message),
    'jwt-grpc:keys-applied': (message, worker) => state.keysApplied(worker, message),
    'jwt-grpc:policy-applied': (message, worker) => state.policyApplied(worker, message),
    'jwt-grpc:reserve-status-indexes': (message, worker) => state.reserveStatusIndexes(worker, message),
    'jwt-grpc:revoke': (message, worker) => state.revoke(worker, message),
    'jwt-grpc:metrics': (message) => metrics?.receive(message.id, message.metrics),
  };
}

/**
 * The ports the workers serve, bound here before any worker is forked (one that cannot be
 * bound stops the start, and no worker is forked for nothing): gRPC on `address`, and
 * discovery on `httpHost` (default: the gRPC host) with the `httpPort` option.
 */
async function bindPorts(options: ResolvedClusterOptions): Promise<ClusterPortSet> {
  const { address } = options;
  const { host, port } = parseAddress(address);
  const { httpPort, httpHost } = options.server;
  const grpc: PortAddress = { host, port, refused: (err) => cannotListen(address, err) };
  if (httpPort === undefined) return ClusterPortSet.bind(grpc, undefined, options.logger);
  const discoveryHost = httpHost ?? host;
  const discovery: PortAddress = {
    host: discoveryHost,
    port: httpPort,
    refused: (err) => cannotServe('discovery', discoveryHost, httpPort, 'httpPort', err),
  };
  return ClusterPortSet.bind(grpc, discovery, options.logger);
}

/** First SIGTERM/SIGINT drains every worker, a second kills them; SIGHUP reloads. Removed once the cluster is done. */
function handleSignals(options: ResolvedClusterOptions, supervisor: Supervisor, state: StateDistributor): void {
  const { logger, graceMs } = options;
  const drain = (): void => {
    logger.info('draining all workers: no new calls; calls in flight may finish', { graceMs });
    supervisor.stop(0, graceMs);
  };
  const force = (): void => {
    logger.warn('second signal: killing all workers');
    supervisor.kill();
  };
  const removeStopSignals = onStopSignals(drain, force);
  const removeReloadSignal = onReloadSignal(state.reloads(), logger);
  void supervisor.done.then(() => {
    removeStopSignals();
    removeReloadSignal();
  });
}

/**
 * The primary's metrics (option `server.metricsPort`): its own registry (reloads, the key
 * and store gauges, its /metrics port's connections) plus the sum of its workers', which
 * count their gRPC and discovery ports themselves.
 */
class PrimaryMetrics {
  readonly #registry: Registry;
  readonly cluster: ClusterMetrics;
  readonly keyReloads: ReloadMetrics;
  readonly policyReloads: ReloadMetrics;
  readonly #connections: ConnectionMetrics;

  private constructor(registry: Registry) {
    this.#registry = registry;
    this.cluster = new ClusterMetrics(registry);
    this.keyReloads = new ReloadMetrics(registry);
    this.policyReloads = new ReloadMetrics(registry, 'policy');
    this.#connections = new ConnectionMetrics(registry);
  }

  /** Undefined without `server.metricsPort`. */
  static create(options: ResolvedClusterOptions): PrimaryMetrics | undefined {
    return options.server.metricsPort === undefined ? undefined : new PrimaryMetrics(new (promClient().Registry)());
  }

  /** Gauges of the keys handed out now and of the store. */
  watch(state: StateDistributor): void {
    registerKeyGauge(this.#registry, () => state.keys);
    registerStoreGauge(this.#registry, () => state.revocations);
  }

  /** Serves /metrics once the workers listen; a port that cannot be bound stops the cluster. */
  async serve(options: ResolvedClusterOptions, supervisor: Supervisor): Promise<MetricsEndpoint | undefined> {
    const port = options.server.metricsPort;
    if (port === undefined) return undefined;
    const endpoint = await serveMetrics(hostOf(options.address), port, () => this.cluster.text(supervisor.serving()), options.logger, {
      handshakeTimeoutMs: optionValue('handshakeTimeoutMs', options.server.handshakeTimeoutMs),
      peerSharePercent: optionValue('peerSharePercent', options.server.peerSharePercent),
      counters: this.#connections,
    }).catch((err: unknown) => {
      supervisor.stop(1, 0);
      throw err;
    });
    void supervisor.done.then(() => endpoint.close());
    return endpoint;
  }
}

function primaryHandle(
  options: ResolvedClusterOptions,
  supervisor: Supervisor,
  state: StateDistributor,
  ports: HandedPortNumbers,
  endpoint: MetricsEndpoint | undefined,
): ClusterHandle {
  return {
    role: 'primary',
    port: ports.grpc,
    get keys() {
      return state.keys;
    },
    metricsPort: endpoint?.port,
    httpPort: ports.discovery,
    reloadKeys: () => state.reloadKeys(),
    get policy() {
      return state.policy;
    },
    reloadPolicy: () => state.reloadPolicy(),
    servingPids: () => supervisor.serving().flatMap((worker) => (worker.process.pid === undefined ? [] : [worker.process.pid])),
    close: () => {
      if (!supervisor.stopping) supervisor.stop(0, options.graceMs);
      return supervisor.done.then(() => {});
    },
    done: supervisor.done,
  };
}
