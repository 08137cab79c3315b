/**
 * A server's revocations: the in-memory set VerifyJwt reads, fed by a
 * {@link RevocationStore} when there is one (the file, Redis, or in a cluster worker the
 * primary), swept of expired entries on one timer that runs only while the set holds
 * something. @internal
 */
import type { Logger } from '../base/log.js';
import { RevocationSet } from './set.js';
import type { Revocation, RevocationStore } from '../contracts/revocation-store.js';

/**
 * The kind of a cluster worker's store: its primary, which owns the real store and serves
 * its `jwt_grpc_revocation_store_up`; a worker reports no store status of its own.
 */
export const RELAYED_STORE_KIND = 'primary';

/** How often expired entries are dropped: memory lags the tokens still valid by at most this. */
const SWEEP_INTERVAL_MS = 5000;

export class Revocations {
  readonly #set: RevocationSet;
  readonly #store: RevocationStore | undefined;
  readonly #listeners: ((revocations: readonly Revocation[]) => void)[] = [];
  /** The store write in flight per jti: concurrent revokes of one token share it, so it is written once. */
  readonly #writing = new Map<string, Promise<boolean>>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(store?: RevocationStore, clock?: () => number) {
    this.#set = new RevocationSet(clock);
    this.#store = store;
  }

  /**
   * Starts the store (its first load fills the set); rejects, as the store does, when it
   * cannot be reached. `relay` hears every revocation that arrives from the store (a
   * cluster primary hands them on to its workers).
   */
  async start(logger: Logger, relay?: (revocations: readonly Revocation[]) => void): Promise<void> {
    if (this.#store === undefined) return;
    await this.#store.start((revocations) => {
      this.receive(revocations);
      relay?.(revocations);
    });
    // A cluster worker's relay ('primary') gets what the primary loaded, which the primary logs once.
    if (this.#store.kind !== 'primary') logger.info(`revocations: ${this.#set.size} loaded from the ${this.#store.kind} store`);
  }

  /** The store's kind, or undefined with none (memory only). */
  get storeKind(): string | undefined {
    return this.#store?.kind;
  }

  /** Whether the store is reachable and current; undefined without one, and in a cluster worker (its primary reports it). */
  get storeUp(): boolean | undefined {
    return this.#store === undefined || this.#store.kind === RELAYED_STORE_KIND ? undefined : this.#store.up;
  }

  /**
   * The store's status-list index counter (`reserveStatusIndexes`), or undefined when the
   * store keeps none (memory only, a store of your own without one).
   */
  get reserveStatusIndexes(): ((count: number) => Promise<number>) | undefined {
    const store = this.#store;
    return store?.reserveStatusIndexes === undefined ? undefined : (count) => store.reserveStatusIndexes!(count);
  }

  /** The entries held now (what a cluster primary hands a worker that starts). */
  values(): Revocation[] {
    return [...this.#set.values()];
  }

  /** Revoked entries held now. */
  get size(): number {
    return this.#set.size;
  }

  /** Whether `jti` is revoked: VerifyJwt's check, one Map lookup. */
  has(jti: unknown): boolean {
    return this.#set.has(jti);
  }

  /** When the entry of `jti` goes, or undefined when it is not revoked. */
  expiresAt(jti: string): number | undefined {
    return this.#set.get(jti)?.expiresAt;
  }

  /**
   * Hears every revocation this process starts to hold, from any source (the store's load,
   * another replica, the primary, a RevokeJwt it served); what the token status list marks.
   */
  subscribe(listener: (revocations: readonly Revocation[]) => void): void {
    this.#listeners.push(listener);
  }

  /** Revocations that arrive from the store (its load, another replica, the primary). */
  receive(revocations: readonly Revocation[]): void {
    const added = revocations.filter((revocation) => this.#set.add(revocation));
    this.#sweepWhileHeld();
    if (added.length > 0) for (const listener of this.#listeners) listener(added);
  }

  /**
   * Makes `revocation` durable in the store (when there is one), then holds it. Resolves
   * to false when it was held already, until at least as late: nothing is written again.
   * Rejects as the store's `add` does, having held nothing. Revokes of one jti run one at
   * a time: one that comes while another's write is in flight waits for it, then finds the
   * token held (or, if that write failed, writes itself).
   */
  async revoke(revocation: Revocation): Promise<boolean> {
    const inFlight = this.#writing.get(revocation.jti);
    if (inFlight !== undefined) {
      await inFlight.catch(() => undefined);
      return this.revoke(revocation);
    }
    const write = this.#write(revocation);
    this.#writing.set(revocation.jti, write);
    try {
      return await write;
    } finally {
      if (this.#writing.get(revocation.jti) === write) this.#writing.delete(revocation.jti);
    }
  }

  async #write(revocation: Revocation): Promise<boolean> {
    const known = this.#set.get(revocation.jti);
    if (known !== undefined && known.expiresAt >= revocation.expiresAt) {
      if (revocation.statusIndex === undefined || known.statusIndex !== undefined) return false;
      // Revoked by jti first, now by the token: store its status-list index, keeping the later expiry.
      revocation = { ...revocation, expiresAt: known.expiresAt };
    }
    await this.#store?.add(revocation);
    // In a cluster worker the primary's broadcast has usually added it already (and told the listeners).
    if (this.#set.add(revocation)) for (const listener of this.#listeners) listener([revocation]);
    this.#sweepWhileHeld();
    return true;
  }

  /** Drops expired entries now (the sweeper does it every few seconds). */
  sweep(): number {
    return this.#set.sweep();
  }

  /** Stops the sweeper and closes the store. Idempotent. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await this.#store?.close();
  }

  /** One unref'd interval while the set holds entries; it stops itself once the set is empty. */
  #sweepWhileHeld(): void {
    if (this.#sweeper !== undefined || this.#set.size === 0) return;
    this.#sweeper = setInterval(() => {
      this.#set.sweep();
      if (this.#set.size === 0) {
        clearInterval(this.#sweeper);
        this.#sweeper = undefined;
      }
    }, SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }
}
