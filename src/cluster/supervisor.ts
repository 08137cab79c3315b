import cluster, { type Worker } from 'node:cluster';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { exitLatch } from './handle.js';
import { type PrimaryMessage, SPARE_ENV } from './messages.js';

/** A worker that dies sooner than this after it started listening counts as a quick crash. */
export const QUICK_CRASH_MS = 2000;
/** Longest wait before respawning a crashing worker. */
export const MAX_BACKOFF_MS = 2000;
/** The most a crash loop lets the other workers drain before the cluster stops. */
const CRASH_LOOP_GRACE_MS = 2000;
/**
 * How long after every slot listens the spare is forked: its start (a whole Node start and
 * module load) would otherwise take CPU from a replacement's first calls, or a new
 * cluster's, on the same cores.
 */
export const SPARE_FORK_DELAY_MS = 1000;
/** How long past the grace period a worker that ignored the shutdown (stuck, not started yet) is killed. */
const KILL_AFTER_GRACE_MS = 1000;

/**
 * The wait before respawning a slot after its `quickCrashes`-th quick crash in a row:
 * the first at once (a kill -9 is replaced within milliseconds), then 100, 200, 400 ms...
 * up to {@link MAX_BACKOFF_MS}. @internal
 */
export function backoffMs(quickCrashes: number): number {
  return quickCrashes <= 1 ? 0 : Math.min(100 * 2 ** (quickCrashes - 2), MAX_BACKOFF_MS);
}

/** Starts the worker process of slot `index`, or the spare (`spare` true; `index` is then the number of slots). @internal */
export type ForkWorker = (index: number, spare: boolean) => Worker;

/**
 * A node:cluster worker; `JWT_GRPC_WORKER` tells it its slot (the CLI logs it), `JWT_GRPC_SPARE`
 * that it is the spare and waits for a slot before it listens (./worker.ts). @internal
 */
export function forkClusterWorker(index: number, spare: boolean): Worker {
  // No scheduling policy to choose: workers bind no port through node:cluster; the primary hands them connections (./dispatcher.ts).
  return cluster.fork({ JWT_GRPC_WORKER: String(index), ...(spare && { [SPARE_ENV]: '1' }) });
}

/** One worker place: the worker in it now, when it started listening, and its run of quick crashes. */
class WorkerSlot {
  readonly index: number;
  #worker: Worker | undefined;
  #listeningAt: number | undefined;
  #quickCrashes = 0;
  #respawnTimer: NodeJS.Timeout | undefined;

  constructor(index: number) {
    this.index = index;
  }

  get worker(): Worker | undefined {
    return this.#worker;
  }

  get listening(): boolean {
    return this.#listeningAt !== undefined;
  }

  /** The worker leaves this place alive (the spare taking a slot): no exit to count. */
  handOver(): Worker | undefined {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#listeningAt = undefined;
    return worker;
  }

  get respawning(): boolean {
    return this.#respawnTimer !== undefined;
  }

  forked(worker: Worker): void {
    this.#respawnTimer = undefined;
    this.#listeningAt = undefined;
    this.#worker = worker;
  }

  markListening(): void {
    this.#listeningAt = Date.now();
  }

  /** The worker exited: returns the quick crashes in a row, this one counted (a crash after a good run counts 1). */
  exited(): number {
    this.#worker = undefined;
    const quick = this.#listeningAt === undefined || Date.now() - this.#listeningAt < QUICK_CRASH_MS;
    this.#quickCrashes = quick ? this.#quickCrashes + 1 : 1;
    return this.#quickCrashes;
  }

  respawnIn(delayMs: number, respawn: () => void): void {
    this.#respawnTimer = setTimeout(respawn, delayMs);
  }

  cancelRespawn(): void {
    clearTimeout(this.#respawnTimer);
    this.#respawnTimer = undefined;
  }
}

/** What the log lines of a worker's exit say about it. */
type ExitFields = {
  readonly workerPid: number | undefined;
  readonly slot: number;
  readonly code: number | null;
  readonly signal: string | null;
};

/** @internal */
export interface SupervisorOptions {
  /** How many worker slots to keep filled. */
  readonly workers: number;
  /** Keep a spare worker (modules loaded, keys in hand, not listening) to take a dead worker's slot at once. */
  readonly spare: boolean;
  /** Quick crashes in a row of one slot after which the cluster stops. */
  readonly maxQuickRestarts: number;
  /** The drain a stop gives; a crash loop gives at most {@link CRASH_LOOP_GRACE_MS} of it. */
  readonly graceMs: number;
  readonly logger: Logger;
  /** Starts a worker; {@link forkClusterWorker} in a cluster, a fake in tests. */
  readonly fork: ForkWorker;
  /** Each worker forked, before it can send anything: where its messages get wired. */
  readonly forked: (worker: Worker) => void;
  /** Each worker that exited, before it is replaced: nothing more can be waited for from it. */
  readonly exited: (worker: Worker) => void;
  /** The first {@link Supervisor.stop}, before any worker is told: the primary stops taking connections. */
  readonly stopping?: () => void;
}

/**
 * Keeps `workers` slots filled: forks a worker per slot, replaces one that exits (at once,
 * then with {@link backoffMs} while it keeps crashing within {@link QUICK_CRASH_MS} of
 * listening), stops the cluster on a crash loop or an address that cannot be bound, and
 * drains every worker on {@link stop}. `ready` resolves once every slot's worker
 * listens; `done` with the exit code once every worker has exited after a stop.
 *
 * @example
 * ```ts
 * const supervisor = new Supervisor({ workers: 4, maxQuickRestarts: 5, logger, fork: forkClusterWorker, forked: wire, exited: forget });
 * supervisor.start();
 * const { port } = await supervisor.ready;
 * ```
 * @internal
 */
export class Supervisor {
  readonly #options: SupervisorOptions;
  readonly #slots: readonly WorkerSlot[];
  /** The spare's place; its worker is ready once it said so (listening, for a slot). */
  readonly #spare: WorkerSlot | undefined;
  readonly #latch = exitLatch();
  readonly #ready: Promise<void>;
  #markReady!: () => void;
  #failStart!: (err: JwtGrpcError) => void;
  #stopping = false;

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#slots = Array.from({ length: options.workers }, (_, index) => new WorkerSlot(index));
    this.#spare = options.spare ? new WorkerSlot(options.workers) : undefined;
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#markReady = resolve;
      this.#failStart = reject;
    });
  }

  /** Every slot's worker listens; rejects (ERR_CLUSTER, ERR_LISTEN) when the cluster cannot start. */
  get ready(): Promise<void> {
    return this.#ready;
  }

  /** The exit code once a stop has ended every worker. */
  get done(): Promise<number> {
    return this.#latch.done;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Forks a worker into every slot. */
  start(): void {
    for (const slot of this.#slots) this.#fork(slot);
  }

  /** Every worker process now (started, not yet exited), the spare's included: what reloads and revocations reach. */
  live(): Worker[] {
    return this.#places().flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));
  }

  /** The workers in their slots now: those that serve, or are starting to (not the spare). */
  serving(): Worker[] {
    return this.#slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));
  }

  /** `worker` serves; the last slot to serve makes the cluster ready, and starts a spare if there is none. */
  listening(worker: Worker): void {
    this.#slotOf(worker)?.markListening();
    if (!this.#slots.every((slot) => slot.listening)) return;
    this.#markReady();
    // Forked only later: at start and after a dead worker's replacement, the spare's own start takes no CPU from theirs.
    const spare = this.#spare;
    if (spare !== undefined && spare.worker === undefined && !spare.respawning && !this.#stopping)
      spare.respawnIn(SPARE_FORK_DELAY_MS, () => this.#fork(spare));
  }

  /** The spare has loaded everything and waits: from now on it can take a slot; one given a slot while it was starting takes it now. */
  spareReady(worker: Worker): void {
    if (this.#slotOf(worker) !== undefined) return void worker.send({ type: 'jwt-grpc:take-slot' } satisfies PrimaryMessage);
    if (this.#spare?.worker !== worker) return;
    this.#spare.markListening();
    this.#options.logger.info(`spare worker ${worker.process.pid} ready: it takes the next dead worker's slot`, {
      workerPid: worker.process.pid,
    });
  }

  /** A worker cannot bind the address: no respawn can fix that, so the cluster stops. */
  cannotListen(message: string): void {
    if (this.#stopping) return;
    this.#failStart(new JwtGrpcError('ERR_LISTEN', message, { field: 'address' }));
    this.stop(1, 0);
  }

  /**
   * Stops respawning and asks every worker to drain within `graceMs` (0: kills them);
   * one still there after the grace period is killed. `done` then resolves with `code`.
   */
  stop(code: number, graceMs: number): void {
    if (!this.#stopping) this.#options.stopping?.();
    this.#stopping = true;
    for (const slot of this.#places()) slot.cancelRespawn();
    const workers = this.live();
    if (workers.length === 0) return this.#latch.finish(code);
    for (const worker of workers) {
      if (graceMs === 0) worker.process.kill('SIGKILL');
      // The spare serves nothing, so it has nothing to drain; one still loading its modules
      // would miss a message (no listener yet) and wait out the grace period: SIGTERM ends it either way.
      else if (worker === this.#spare?.worker) worker.process.kill('SIGTERM');
      else if (worker.isConnected()) worker.send({ type: 'jwt-grpc:shutdown', graceMs } satisfies PrimaryMessage);
    }
    setTimeout(() => this.#killLive(), graceMs + KILL_AFTER_GRACE_MS).unref();
    void Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('exit', resolve)))).then(() => this.#latch.finish(code));
  }

  /** Kills every worker now and ends with exit code 1 (a second SIGTERM). */
  kill(): void {
    this.#killLive();
    this.#latch.finish(1);
  }

  #killLive(): void {
    for (const worker of this.live()) worker.process.kill('SIGKILL');
  }

  #places(): WorkerSlot[] {
    return this.#spare === undefined ? [...this.#slots] : [...this.#slots, this.#spare];
  }

  #slotOf(worker: Worker): WorkerSlot | undefined {
    return this.#slots.find((slot) => slot.worker === worker);
  }

  #fork(slot: WorkerSlot): void {
    const spare = slot === this.#spare;
    const worker = this.#options.fork(slot.index, spare);
    slot.forked(worker);
    const pid = worker.process.pid;
    this.#options.logger.info(spare ? `worker ${pid} started as the spare` : `worker ${pid} started`, { workerPid: pid, slot: slot.index });
    this.#options.forked(worker);
    // The place is looked up at the exit: the spare may have taken a slot meanwhile.
    worker.once('exit', (code: number | null, signal: string | null) => {
      const place = this.#places().find((candidate) => candidate.worker === worker);
      if (place !== undefined) this.#exited(place, worker, { workerPid: pid, slot: place.index, code, signal });
    });
  }

  #exited(slot: WorkerSlot, worker: Worker, fields: ExitFields): void {
    const quickCrashes = slot.exited();
    this.#options.exited(worker);
    const { logger, maxQuickRestarts } = this.#options;
    if (this.#stopping) return logger.info(`worker ${fields.workerPid} exited`, fields);
    if (quickCrashes >= maxQuickRestarts) return this.#crashLoop(quickCrashes, fields);
    const delay = backoffMs(quickCrashes);
    if (delay === 0 && slot !== this.#spare && this.#spare?.worker !== undefined) return this.#takeSpare(slot, fields);
    logger.warn(`worker ${fields.workerPid} exited; restarting in ${delay} ms`, fields);
    slot.respawnIn(delay, () => this.#fork(slot));
  }

  /**
   * The spare takes `slot`: at once when ready, else as soon as it says it is (it is further
   * into its start than a worker forked now would be). The next spare is forked once it listens (see {@link listening}).
   */
  #takeSpare(slot: WorkerSlot, fields: ExitFields): void {
    const ready = this.#spare?.listening === true;
    const spare = this.#spare?.handOver() as Worker;
    slot.forked(spare);
    if (ready) spare.send({ type: 'jwt-grpc:take-slot' } satisfies PrimaryMessage);
    this.#options.logger.warn(`worker ${fields.workerPid} exited; the spare ${spare.process.pid} takes its slot`, {
      ...fields,
      sparePid: spare.process.pid,
    });
  }

  #crashLoop(quickCrashes: number, fields: ExitFields): void {
    const message =
      `worker slot ${fields.slot} crashed ${quickCrashes} times in a row within ${QUICK_CRASH_MS} ms of ` +
      `starting (last: pid ${fields.workerPid}, code ${fields.code}, signal ${fields.signal}); stopping the cluster`;
    this.#options.logger.error(message, fields);
    this.#failStart(new JwtGrpcError('ERR_CLUSTER', message));
    this.stop(1, Math.min(this.#options.graceMs, CRASH_LOOP_GRACE_MS));
  }
}
