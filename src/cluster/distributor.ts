import type { Worker } from 'node:cluster';
import { JwtGrpcError } from '../base/errors.js';
import { exportKeys } from '../keys/export.js';
import { generateEphemeralKeys } from '../keys/ephemeral.js';
import type { KeySet } from '../keys/key-set.js';
import { KeyReloader, type ReloadCounts } from '../keys/reload.js';
import type { Logger } from '../base/log.js';
import type { JwtPolicy } from '../policy/document.js';
import { PolicyReloader } from '../policy/reload.js';
import { openRevocationStore } from '../revocation/open.js';
import { Revocations } from '../revocation/revocations.js';
import { HandOut, sendTo } from './hand-out.js';
import { type Reloads, noKeyLoader, noPolicyLoader } from './handle.js';
import type { HandedPortNumbers, PrimaryMessage, WorkerMessageOf } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';
import { broadcastRevoked, serveWorkerRevoke } from './revocations.js';

/** @internal */
export interface DistributorOptions {
  /** The keys in use at the start. */
  readonly keys: KeySet;
  /** The policy in use at the start; undefined in open mode. */
  readonly policy: JwtPolicy | undefined;
  /** The revocations, over the store the primary alone owns. */
  readonly revocations: Revocations;
  /** The workers to hand things to: those alive now. */
  readonly workers: () => readonly Worker[];
  /** Reads the keys again on a reload; undefined: ephemeral keys, nothing to reload. */
  readonly loadKeys: (() => Promise<KeySet>) | undefined;
  /** Reads the policy again on a reload; undefined: no policy file. */
  readonly loadPolicy: (() => Promise<JwtPolicy>) | undefined;
  readonly logger: Logger;
  readonly keyReloads?: ReloadCounts | undefined;
  readonly policyReloads?: ReloadCounts | undefined;
}

/**
 * What the primary holds for every worker: the keys and the policy (read and checked
 * here, once, so every worker serves exactly what the primary read) and the revocation
 * store (workers reach it over IPC, ./revocations.ts). A worker that says hello gets what
 * is in use then; a reload is handed to every live worker, and waits until each has put
 * it in use or exited.
 *
 * @example
 * ```ts
 * const state = await StateDistributor.load(options, () => supervisor.live());
 * await state.start();
 * await state.reloadKeys(); // every live worker now signs with the reloaded keys
 * ```
 * @internal
 */
export class StateDistributor {
  readonly #revocations: Revocations;
  readonly #workers: () => readonly Worker[];
  readonly #logger: Logger;
  readonly #loadKeys: (() => Promise<KeySet>) | undefined;
  readonly #loadPolicy: (() => Promise<JwtPolicy>) | undefined;
  readonly #keyHandOut: HandOut;
  readonly #policyHandOut: HandOut;
  readonly #keyReloader: KeyReloader;
  readonly #policyReloader: PolicyReloader;
  #keys: KeySet;
  #policy: JwtPolicy | undefined;
  #keyGeneration = 0;

  constructor(options: DistributorOptions) {
    this.#keys = options.keys;
    this.#policy = options.policy;
    this.#revocations = options.revocations;
    this.#workers = options.workers;
    this.#logger = options.logger;
    this.#loadKeys = options.loadKeys;
    this.#loadPolicy = options.loadPolicy;
    this.#keyHandOut = new HandOut('keys', options.logger);
    this.#policyHandOut = new HandOut('policy', options.logger);
    this.#keyReloader = new KeyReloader({
      current: () => this.#keys,
      apply: (next) => this.#handOutKeys(next),
      logger: options.logger,
      metrics: options.keyReloads,
    });
    this.#policyReloader = new PolicyReloader({
      apply: (next, generation) => this.#handOutPolicy(next, generation),
      logger: options.logger,
      metrics: options.policyReloads,
    });
  }

  /**
   * Reads the keys (generated once when none are configured: every worker gets the same),
   * the policy, and opens the revocation store: once, in the primary.
   */
  static async load(
    options: ResolvedClusterOptions,
    workers: () => readonly Worker[],
    reloads: { keys?: ReloadCounts; policy?: ReloadCounts } = {},
  ): Promise<StateDistributor> {
    const { logger } = options;
    const keys = options.keys === undefined ? await generateEphemeralKeys(logger) : await options.keys();
    const policy = options.policy === undefined ? undefined : await options.policy();
    const revocations = new Revocations(await openRevocationStore(options.server, logger));
    return new StateDistributor({
      keys,
      policy,
      revocations,
      workers,
      loadKeys: options.keys,
      loadPolicy: options.policy,
      logger,
      keyReloads: reloads.keys,
      policyReloads: reloads.policy,
    });
  }

  get keys(): KeySet {
    return this.#keys;
  }

  get policy(): JwtPolicy | undefined {
    return this.#policy;
  }

  get revocations(): Revocations {
    return this.#revocations;
  }

  /**
   * Starts the store: its first load completes before any worker starts, so every worker
   * starts with it; what arrives later goes to every live worker. A store that does not
   * start is closed again.
   */
  async start(): Promise<void> {
    await this.#revocations
      .start(this.#logger, (arrived) => broadcastRevoked(this.#workers(), arrived))
      .catch(async (err: unknown) => {
        await this.#revocations.close();
        throw err;
      });
  }

  close(): Promise<void> {
    return this.#revocations.close();
  }

  /** A worker's hello: the keys and policy in use now (reloaded ones once there are), the revocations held now, and the `ports` the primary holds. */
  hello(worker: Worker, ports: HandedPortNumbers): void {
    sendTo(worker, this.#startMessage(ports));
  }

  /** Reloads the keys with the key loader and hands them to every live worker; rejects without one. */
  reloadKeys(): Promise<KeySet> {
    return this.#loadKeys === undefined ? Promise.reject(noKeyLoader()) : this.#keyReloader.reload(this.#loadKeys);
  }

  /** Reloads the policy with the policy loader and hands it to every live worker; rejects without one. */
  reloadPolicy(): Promise<JwtPolicy> {
    return this.#loadPolicy === undefined ? Promise.reject(noPolicyLoader()) : this.#policyReloader.reload(this.#loadPolicy);
  }

  /** What SIGHUP reloads: what has a loader. */
  reloads(): Reloads {
    return { keys: this.#loadKeys && (() => this.reloadKeys()), policy: this.#loadPolicy && (() => this.reloadPolicy()) };
  }

  keysApplied(worker: Worker, message: WorkerMessageOf<'jwt-grpc:keys-applied'>): void {
    this.#keyHandOut.acknowledged(worker, message.generation, message.error);
  }

  policyApplied(worker: Worker, message: WorkerMessageOf<'jwt-grpc:policy-applied'>): void {
    this.#policyHandOut.acknowledged(worker, message.generation, message.error);
  }

  /** A worker exited: no reload waits for it any more. */
  exited(worker: Worker): void {
    this.#keyHandOut.exited(worker);
    this.#policyHandOut.exited(worker);
  }

  /** A worker's RevokeJwt: stored, sent to every live worker, then answered. */
  revoke(worker: Worker, message: WorkerMessageOf<'jwt-grpc:revoke'>): void {
    serveWorkerRevoke(this.#revocations, this.#workers, worker, message, this.#logger);
  }

  /**
   * A block of status list indexes from the store's one durable counter (the file's
   * reservation mark, Redis INCRBY): no two workers, nor a worker and its respawn, nor this
   * cluster before and after a restart, hand out the same index. resolveServerOptions
   * refused statusList without such a store.
   */
  reserveStatusIndexes(worker: Worker, message: WorkerMessageOf<'jwt-grpc:reserve-status-indexes'>): void {
    const reserve =
      this.#revocations.reserveStatusIndexes ??
      ((): Promise<number> =>
        Promise.reject(new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', 'the revocation store keeps no status list index counter')));
    reserve(message.count).then(
      (first) => sendTo(worker, { type: 'jwt-grpc:status-indexes', id: message.id, first }),
      (err: unknown) =>
        sendTo(worker, { type: 'jwt-grpc:status-indexes', id: message.id, error: err instanceof Error ? err.message : String(err) }),
    );
  }

  #startMessage(ports: HandedPortNumbers): PrimaryMessage {
    return {
      type: 'jwt-grpc:start',
      ports,
      jwks: exportKeys(this.#keys, { includePrivate: true }),
      revocations: this.#revocations.values(),
      ...(this.#policy !== undefined && { policy: this.#policy }),
    };
  }

  /** Reloaded keys (checked by the reloader, once) to every live worker; a worker forked later gets them in its start message. */
  async #handOutKeys(next: KeySet): Promise<void> {
    this.#keys = next;
    const generation = ++this.#keyGeneration;
    await this.#keyHandOut.send(this.#workers(), generation, {
      type: 'jwt-grpc:keys',
      generation,
      jwks: exportKeys(next, { includePrivate: true }),
    });
  }

  async #handOutPolicy(next: JwtPolicy, generation: number): Promise<void> {
    this.#policy = next;
    await this.#policyHandOut.send(this.#workers(), generation, { type: 'jwt-grpc:policy', generation, policy: next });
  }
}
