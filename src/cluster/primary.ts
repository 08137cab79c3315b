import cluster, { type Worker } from 'node:cluster';
import { JwtGrpcError } from '../errors.js';
import { exportKeys } from '../keys/export.js';
import { generateKeys } from '../keys/generate.js';
import type { KeySet } from '../keys/key-set.js';
import { type ClusterHandle, onStopSignals } from './handle.js';
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

async function primaryKeys(options: ResolvedClusterOptions): Promise<KeySet> {
  if (options.keys !== undefined) return options.keys();
  const keys = await generateKeys();
  options.logger.warn(
    'no keys configured: generated EPHEMERAL keys in memory (shared by every worker); tokens will not ' +
      'verify after a restart. Configure keys for production.',
    { kids: keys.keys.map((key) => key.kid) },
  );
  return keys;
}

/**
 * The cluster primary: loads keys once, forks the workers (which share one port through
 * node:cluster), hands them the keys over IPC, respawns the ones that die with backoff,
 * gives up on a crash loop, and drains every worker on SIGTERM/SIGINT. @internal
 */
export async function runPrimary(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  const { logger } = options;
  const keys = await primaryKeys(options);
  const start: PrimaryMessage = { type: 'jwt-grpc:start', jwks: exportKeys(keys, { includePrivate: true }) };
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
  let stopping = false;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
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
    logger.info(`worker ${pid} started`, { pid, slot: slot.index });
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.type === 'jwt-grpc:hello') {
        worker.send(start);
        return;
      }
      slot.listeningAt = Date.now();
      port = message.port;
      if (slots.every((s) => s.listeningAt !== undefined)) markReady();
    });
    worker.once('exit', (code, signal) => {
      slot.worker = undefined;
      const fields = { pid, slot: slot.index, code, signal };
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
  await ready;

  return {
    role: 'primary',
    port: port as number,
    keys,
    servingPids: () => live().flatMap((worker) => (worker.process.pid === undefined ? [] : [worker.process.pid])),
    close: () => {
      if (!stopping) stopAll(0, options.graceMs);
      return done.then(() => {});
    },
    done,
  };
}
