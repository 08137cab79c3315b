import cluster, { type Worker } from 'node:cluster';
import { promClient } from '../optional-deps.js';
import { JwtGrpcError } from '../errors.js';
import { exportKeys } from '../keys/export.js';
import { generateEphemeralKeys } from '../keys/ephemeral.js';
import type { KeySet } from '../keys/key-set.js';
import { KeyReloader } from '../keys/reload.js';
import { ClusterMetrics } from '../metrics/cluster.js';
import { ConnectionMetrics } from '../metrics/connections.js';
import { optionValue } from '../options/resolve.js';
import { type MetricsEndpoint, hostOf, serveMetrics } from '../metrics/http.js';
import { ReloadMetrics, registerKeyGauge, registerStoreGauge } from '../metrics/jwt-service-metrics.js';
import type { JwtPolicy } from '../policy/check.js';
import { PolicyReloader } from '../policy/reload.js';
import { openRevocationStore } from '../revocation/open.js';
import { Revocations } from '../revocation/revocations.js';
import { HandOut, sendTo } from './hand-out.js';
import { type ClusterHandle, exitLatch, noKeyLoader, noPolicyLoader, onReloadSignal, onStopSignals } from './handle.js';
import { broadcastRevoked, serveWorkerRevoke } from './revocations.js';
import { type PrimaryMessage, isWorkerMessage } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';

/** A worker that dies sooner than this after it started listening counts as a quick crash. */
const QUICK_CRASH_MS = 2000;
/** Longest wait before respawning a crashing worker. */
const MAX_BACKOFF_MS = 2000;

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  listeningAt: number | undefined;
  quickCrashes: number;
  respawnTimer: NodeJS.Timeout | undefined;
}

/** First respawn at once (a kill -9 is replaced within milliseconds), then 100, 200, 400 ms... */
function backoffMs(quickCrashes: number): number {
  return quickCrashes <= 1 ? 0 : Math.min(100 * 2 ** (quickCrashes - 2), MAX_BACKOFF_MS);
}

/**
 * The cluster primary: loads keys and the policy once, forks the workers (which share one port through
 * node:cluster), hands them the keys over IPC, respawns the ones that die with backoff,
 * gives up on a crash loop, and drains every worker on SIGTERM/SIGINT. @internal
 */
export async function runPrimary(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  const { logger } = options;
  // Generated here, once, when none are configured: every worker gets the same keys.
  let keys: KeySet = options.keys === undefined ? await generateEphemeralKeys(logger) : await options.keys();
  // Read and checked here, once: every worker enforces exactly the policy the primary read.
  let policy: JwtPolicy | undefined = options.policy === undefined ? undefined : await options.policy();
  // The primary owns the revocation store: workers reach it over IPC (./revocations.ts).
  const revocations = new Revocations(await openRevocationStore(options.server, logger));
  // Status list indexes for every worker from the store's one durable counter (the file's
  // reservation mark, Redis INCRBY), block by block: no two workers, nor a worker and its
  // respawn, nor this cluster before and after a restart, hand out the same index.
  // resolveServerOptions refused statusList without such a store.
  const reserveStatusIndexes = revocations.reserveStatusIndexes ?? ((): Promise<number> => Promise.reject(new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', 'the revocation store keeps no status list index counter')));
  // What a worker gets when it says hello: the keys and policy in use (reloaded ones once
  // there are), and the revocations held at that moment.
  const startMessage = (): PrimaryMessage => ({
    type: 'jwt-grpc:start',
    jwks: exportKeys(keys, { includePrivate: true }),
    revocations: revocations.values(),
    ...(policy !== undefined && { policy }),
  });
  let generation = 0;
  const keyHandOut = new HandOut('keys', logger);
  const policyHandOut = new HandOut('policy', logger);
  const metricsRegistry = options.server.metricsPort === undefined ? undefined : new (promClient().Registry)();
  const metrics = metricsRegistry === undefined ? undefined : new ClusterMetrics(metricsRegistry);
  const reloadMetrics = metricsRegistry === undefined ? undefined : new ReloadMetrics(metricsRegistry);
  const policyReloadMetrics = metricsRegistry === undefined ? undefined : new ReloadMetrics(metricsRegistry, 'policy');
  // The primary's own port, /metrics; its workers count their gRPC and discovery ports.
  const connectionMetrics = metricsRegistry === undefined ? undefined : new ConnectionMetrics(metricsRegistry);
  if (metricsRegistry !== undefined) {
    registerKeyGauge(metricsRegistry, () => keys);
    registerStoreGauge(metricsRegistry, () => revocations);
  }
  // Round robin in the primary: the kernel's own balancing (SCHED_NONE) piles connections
  // onto a few workers. It is Linux's default already; Windows' is SCHED_NONE.
  cluster.schedulingPolicy = cluster.SCHED_RR;

  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({
    index,
    worker: undefined,
    listeningAt: undefined,
    quickCrashes: 0,
    respawnTimer: undefined,
  }));
  let port: number | undefined;
  let httpPort: number | undefined;
  let stopping = false;
  const { done, finish } = exitLatch();
  let markReady!: () => void;
  let failStart!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failStart = reject;
  });

  const live = (): Worker[] => slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));

  function stopAll(code: number, graceMs: number): void {
    stopping = true;
    for (const slot of slots) clearTimeout(slot.respawnTimer);
    const workers = live();
    if (workers.length === 0) {
      finish(code);
      return;
    }
    for (const worker of workers) {
      if (graceMs === 0) worker.process.kill('SIGKILL');
      else if (worker.isConnected()) worker.send({ type: 'jwt-grpc:shutdown', graceMs } satisfies PrimaryMessage);
    }
    // A worker that ignores the request (stuck, or not started yet) is killed after the grace period.
    setTimeout(() => live().forEach((worker) => worker.process.kill('SIGKILL')), graceMs + 1000).unref();
    void Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('exit', resolve)))).then(() => finish(code));
  }

  function fork(slot: Slot): void {
    slot.respawnTimer = undefined;
    slot.listeningAt = undefined;
    const worker = cluster.fork({ JWT_GRPC_WORKER: String(slot.index) });
    slot.worker = worker;
    const pid = worker.process.pid;
    logger.info(`worker ${pid} started`, { workerPid: pid, slot: slot.index });
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      switch (message.type) {
        case 'jwt-grpc:hello':
          sendTo(worker, startMessage());
          return;
        case 'jwt-grpc:revoke':
          serveWorkerRevoke(revocations, live, worker, message, logger);
          return;
        case 'jwt-grpc:keys-applied':
          keyHandOut.acknowledged(worker, message.generation, message.error);
          return;
        case 'jwt-grpc:policy-applied':
          policyHandOut.acknowledged(worker, message.generation, message.error);
          return;
        case 'jwt-grpc:metrics':
          metrics?.receive(message.id, message.metrics);
          return;
        case 'jwt-grpc:reserve-status-indexes':
          reserveStatusIndexes(message.count).then(
            (first) => sendTo(worker, { type: 'jwt-grpc:status-indexes', id: message.id, first }),
            (err: unknown) => sendTo(worker, { type: 'jwt-grpc:status-indexes', id: message.id, error: err instanceof Error ? err.message : String(err) }),
          );
          return;
        case 'jwt-grpc:listening':
          slot.listeningAt = Date.now();
          port = message.port;
          httpPort = message.httpPort;
          if (slots.every((s) => s.listeningAt !== undefined)) markReady();
          return;
        case 'jwt-grpc:cannot-listen':
          if (stopping) return;
          failStart(new JwtGrpcError('ERR_LISTEN', message.message, { field: 'address' }));
          stopAll(1, 0);
      }
    });
    worker.once('exit', (code, signal) => {
      slot.worker = undefined;
      keyHandOut.exited(worker);
      policyHandOut.exited(worker);
      const fields = { workerPid: pid, slot: slot.index, code, signal };
      if (stopping) {
        logger.info(`worker ${pid} exited`, fields);
        return;
      }
      const quick = slot.listeningAt === undefined || Date.now() - slot.listeningAt < QUICK_CRASH_MS;
      slot.quickCrashes = quick ? slot.quickCrashes + 1 : 1;
      if (slot.quickCrashes >= options.maxQuickRestarts) {
        const message =
          `worker slot ${slot.index} crashed ${slot.quickCrashes} times in a row within ${QUICK_CRASH_MS} ms of ` +
          `starting (last: pid ${pid}, code ${code}, signal ${signal}); stopping the cluster`;
        logger.error(message, fields);
        failStart(new JwtGrpcError('ERR_CLUSTER', message));
        stopAll(1, Math.min(options.graceMs, 2000));
        return;
      }
      const delay = backoffMs(slot.quickCrashes);
      logger.warn(`worker ${pid} exited; restarting in ${delay} ms`, fields);
      slot.respawnTimer = setTimeout(() => fork(slot), delay);
    });
  }

  // The store's first load completes before any worker starts, so every worker starts with it.
  await revocations.start(logger, (arrived) => broadcastRevoked(live(), arrived)).catch(async (err: unknown) => {
    await revocations.close();
    throw err;
  });
  void done.then(() => revocations.close());
  slots.forEach(fork);
  const removeSignals = options.handleSignals
    ? onStopSignals(
        () => {
          logger.info('draining all workers: no new calls; calls in flight may finish', { graceMs: options.graceMs });
          stopAll(0, options.graceMs);
        },
        () => {
          logger.warn('second signal: killing all workers');
          live().forEach((worker) => worker.process.kill('SIGKILL'));
          finish(1);
        },
      )
    : () => {};
  void done.then(removeSignals);

  /**
   * Hands reloaded keys (checked here, once) to every worker and waits until each has
   * swapped them in, or exited; a worker forked later gets them in its start message.
   */
  async function applyEverywhere(next: KeySet): Promise<void> {
    keys = next;
    generation += 1;
    await keyHandOut.send(live(), generation, { type: 'jwt-grpc:keys', generation, jwks: exportKeys(next, { includePrivate: true }) });
  }
  const reloader = new KeyReloader({ current: () => keys, apply: applyEverywhere, logger, metrics: reloadMetrics });
  const reloadKeys = (): Promise<KeySet> => (options.keys === undefined ? Promise.reject(noKeyLoader()) : reloader.reload(options.keys));
  // The policy the same way: read and checked here, applied by every worker, in every later start message.
  const policyReloader = new PolicyReloader({
    logger,
    metrics: policyReloadMetrics,
    apply: async (next, policyGeneration) => {
      policy = next;
      await policyHandOut.send(live(), policyGeneration, { type: 'jwt-grpc:policy', generation: policyGeneration, policy: next });
    },
  });
  const loadPolicy = options.policy;
  const reloadPolicy = (): Promise<JwtPolicy> => (loadPolicy === undefined ? Promise.reject(noPolicyLoader()) : policyReloader.reload(loadPolicy));
  if (options.handleSignals) void done.then(onReloadSignal({ keys: options.keys && reloadKeys, policy: loadPolicy && reloadPolicy }, logger));

  await ready;
  let endpoint: MetricsEndpoint | undefined;
  if (metrics !== undefined && options.server.metricsPort !== undefined) {
    const metricsPort = options.server.metricsPort;
    endpoint = await serveMetrics(hostOf(options.address), metricsPort, () => metrics.text(live()), logger, {
      handshakeTimeoutMs: optionValue('handshakeTimeoutMs', options.server.handshakeTimeoutMs),
      counters: connectionMetrics,
    }).catch((err: unknown) => {
      stopAll(1, 0);
      throw err;
    });
    void done.then(() => endpoint?.close());
  }

  return {
    role: 'primary',
    port: port as number,
    get keys() {
      return keys;
    },
    metricsPort: endpoint?.port,
    httpPort,
    reloadKeys,
    get policy() {
      return policy;
    },
    reloadPolicy,
    servingPids: () => live().flatMap((worker) => (worker.process.pid === undefined ? [] : [worker.process.pid])),
    close: () => {
      if (!stopping) stopAll(0, options.graceMs);
      return done.then(() => {});
    },
    done,
  };
}
