import type { Registry } from 'prom-client';
import { promClient } from '../base/optional-deps.js';
import { JwtGrpcError } from '../base/errors.js';
import { importKeys } from '../keys/import.js';
import type { Logger } from '../base/log.js';
import { workerMetricsJson } from '../metrics/cluster.js';
import type { ClusterHandle } from './handle.js';
import { type InProcessServer, listenInProcess } from './in-process.js';
import { IndexReservations } from './index-reservations.js';
import { type PrimaryMessage, type PrimaryMessageOf, SPARE_ENV, type WorkerMessage } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';
import { PrimaryRelayStore } from './revocations.js';
import { type HandlerTable, MessageRouter } from './router.js';
import { SpareHold, type SpareState } from './spare.js';
import { WorkerServer } from './worker-server.js';
import { ConnectionInlet } from './inlet.js';
import { Socket } from 'node:net';

type StartMessage = PrimaryMessageOf<'jwt-grpc:start'>;

/** What the start message begins: the keys, policy and revocations to start with, the relay to the primary's store, and the ports the primary holds. */
interface Started {
  readonly start: StartMessage;
  readonly relay: PrimaryRelayStore;
  readonly inlet: ConnectionInlet;
}

/** A handle that came with a message that does not carry one (or before the worker has ports): closed. */
function closeStray(handle: unknown): void {
  if (handle instanceof Socket) handle.destroy();
}

/** Sends to the primary, ignoring a channel that closed meanwhile: the primary handles the exit it sees. */
function send(message: WorkerMessage): void {
  process.send?.(message, undefined, undefined, () => undefined);
}

/**
 * A cluster worker: waits for the keys from the primary, runs exactly the
 * single-process server, swaps in the keys and the policy the primary reloads, answers its metrics
 * requests, and drains when the primary says so. @internal
 */
export async function runWorker(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  // Ctrl-C and a terminal's hang-up reach the whole process group; the primary decides what they do.
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});
  // Counted here, served by the primary: the primary sums its workers' metrics.
  const registry = options.server.metricsPort === undefined ? undefined : new (promClient().Registry)();
  const primary = new PrimaryLink(options.logger, registry);
  const { start, relay, inlet } = await primary.open();
  const initial: SpareState = { keys: importKeys(start.jwks), policy: start.policy };
  // A spare (./spare.ts) has loaded everything and imported the keys; it makes its server when it takes a slot.
  const state = process.env[SPARE_ENV] === '1' ? await primary.spareUntilSlot(initial) : initial;
  if (state === undefined) return stoppedSpare(initial);
  const server = await listenOrReport(options, state, registry, relay, inlet);
  if (server === undefined) return new Promise<never>(() => {});
  primary.target.listening(server);
  // A worker told to stop directly, or orphaned by a dead primary, drains too.
  process.on('SIGTERM', () => void server.close());
  process.on('disconnect', () => void server.close());
  // Every worker serves the discovery port too (held by the primary like the gRPC port),
  // from its own key set: the documents and their ETags agree without talking. From now on
  // the primary hands this worker connections.
  send({ type: 'jwt-grpc:listening' });
  return workerHandle(server);
}

/**
 * The worker's end of the IPC channel: says hello, takes the start message, and routes
 * every later message of the primary to the part it is for.
 */
class PrimaryLink {
  /** Where reloads and the shutdown go. */
  readonly target: WorkerServer;
  readonly #reservations = new IndexReservations(send);
  readonly #registry: Registry | undefined;
  readonly #logger: Logger;
  /** Routes the primary's messages; `from` is the handle sent with one (a connection), else undefined. */
  readonly #router: MessageRouter<PrimaryMessage, unknown>;
  #started: ((started: Started) => void) | undefined;
  #relay: PrimaryRelayStore | undefined;
  #inlet: ConnectionInlet | undefined;
  /** While this worker is the spare: where reloads go. */
  #spare: SpareHold | undefined;
  #slotTaken: ((taken: boolean) => void) | undefined;

  constructor(logger: Logger, registry: Registry | undefined) {
    this.target = new WorkerServer(logger, send);
    this.#registry = registry;
    this.#router = new MessageRouter(this.#handlers(), logger, () => ({ from: 'primary' }));
    this.#logger = logger;
  }

  /** Listens to the primary, then says hello (a message sent before this listener was attached would be lost). */
  open(): Promise<Started> {
    const started = new Promise<Started>((resolve) => (this.#started = resolve));
    process.on('message', (message: unknown, handle: unknown) => {
      this.#router.route(message, handle);
      // Only a connection carries a handle: one that came with anything else is closed, not left open.
      if ((message as { type?: unknown } | null)?.type !== 'jwt-grpc:connection') closeStray(handle);
    });
    send({ type: 'jwt-grpc:hello' });
    return started;
  }

  /**
   * The spare waits for a slot: reloads go to its hold meanwhile. The state to serve with
   * once the primary gives it a slot; undefined when it is stopped first (a shutdown, a
   * SIGTERM, the primary gone): it serves nothing, so it has nothing to drain.
   */
  async spareUntilSlot(initial: SpareState): Promise<SpareState | undefined> {
    const hold = new SpareHold(initial, send);
    this.#spare = hold;
    const taken = new Promise<boolean>((resolve) => (this.#slotTaken = resolve));
    const stop = (): void => this.#slotTaken?.(false);
    process.once('SIGTERM', stop);
    process.once('disconnect', stop);
    send({ type: 'jwt-grpc:spare-ready' });
    const serve = await taken;
    process.off('SIGTERM', stop);
    process.off('disconnect', stop);
    this.#spare = undefined;
    this.#slotTaken = undefined;
    return serve ? hold.state : undefined;
  }

  #handlers(): HandlerTable<PrimaryMessage, unknown> {
    return {
      'jwt-grpc:connection': (message, handle) => (this.#inlet === undefined ? closeStray(handle) : this.#inlet.take(message, handle)),
      'jwt-grpc:start': (message) => this.#start(message),
      // Before the start message nothing is held yet: the start message brings every revocation held then.
      'jwt-grpc:revoked': (message) => this.#relay?.receive(message.revocations),
      'jwt-grpc:revoke-done': (message) => this.#relay?.settle(message.id, message.error),
      'jwt-grpc:status-indexes': (message) => this.#reservations.answered(message),
      'jwt-grpc:keys': (message) => (this.#spare === undefined ? this.target.keys(message) : this.#spare.keys(message)),
      'jwt-grpc:policy': (message) => (this.#spare === undefined ? this.target.policy(message) : this.#spare.policy(message)),
      'jwt-grpc:metrics-request': (message) => this.#answerMetrics(message.id),
      'jwt-grpc:shutdown': (message) => (this.#slotTaken === undefined ? this.target.shutdown(message.graceMs) : this.#slotTaken(false)),
      'jwt-grpc:take-slot': () => this.#slotTaken?.(true),
    };
  }

  /** The first start message starts the worker; the primary sends one per hello, so a second is stale. */
  #start(start: StartMessage): void {
    if (this.#started === undefined) return;
    // The primary owns the revocation store; this worker's server reaches it through this relay.
    this.#relay = new PrimaryRelayStore(start.revocations, send, this.#reservations.reserve);
    this.#inlet = new ConnectionInlet(start.ports, send, this.#logger);
    this.#started({ start, relay: this.#relay, inlet: this.#inlet });
    this.#started = undefined;
  }

  #answerMetrics(id: number): void {
    if (this.#registry === undefined) return;
    void workerMetricsJson(this.#registry).then((metrics) => send({ type: 'jwt-grpc:metrics', id, metrics }));
  }
}

/**
 * The worker's server, or undefined when the address cannot be bound: the primary reports
 * that, once, and stops the cluster; this worker only exits.
 */
async function listenOrReport(
  options: ResolvedClusterOptions,
  state: SpareState,
  registry: Registry | undefined,
  relay: PrimaryRelayStore,
  inlet: ConnectionInlet,
): Promise<InProcessServer | undefined> {
  try {
    return await listenInProcess(
      options,
      state.keys,
      {
        metricsPort: undefined,
        metricsRegistry: registry,
        ...(state.policy !== undefined && { policy: state.policy }),
        revocations: undefined,
        revocationStore: relay,
      },
      inlet.ports,
    );
  } catch (err) {
    if (!(err instanceof JwtGrpcError && err.code === 'ERR_LISTEN')) throw err;
    process.send?.({ type: 'jwt-grpc:cannot-listen', message: err.message } satisfies WorkerMessage, undefined, undefined, () =>
      process.exit(1),
    );
    return undefined;
  }
}

/** A spare stopped before it had a slot: it served nothing and ends at once, with 0. */
function stoppedSpare(state: SpareState): ClusterHandle {
  const notServing = (): Promise<never> =>
    Promise.reject(new JwtGrpcError('ERR_CLUSTER', 'a spare worker that was stopped serves nothing'));
  return {
    role: 'worker',
    port: 0,
    keys: state.keys,
    reloadKeys: notServing,
    policy: state.policy,
    reloadPolicy: notServing,
    metricsPort: undefined,
    httpPort: undefined,
    servingPids: () => [],
    close: () => Promise.resolve(),
    done: Promise.resolve(0),
  };
}

function workerHandle(server: InProcessServer): ClusterHandle {
  return {
    role: 'worker',
    port: server.port,
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
    close: () => server.close(),
    done: server.done,
  };
}
