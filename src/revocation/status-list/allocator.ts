/**
 * Index allocation for the Status List: every token gets its own index (draft-ietf-oauth-
 * status-list-20 section 13.3: the issuer MUST prevent unintended double allocation), and
 * the per-token cost stays one integer increment. Indexes come in blocks from `reserve`:
 * a server's revocation store (RevocationStore.reserveStatusIndexes: the file's
 * reservation line, Redis `INCRBY`), directly or through the cluster primary for its
 * workers, so they never repeat after a restart; the next block is reserved in
 * the background when half of the current one is used, so `next` does not wait while the
 * store keeps up. When it does not (a slow fsync under a busy disk, a primary answering
 * many workers), `take` holds the call until the block in flight arrives, for at most
 * {@link INDEX_WAIT_MS}, rather than refusing it at the block boundary.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../base/log.js';
import { JwtGrpcError } from '../../base/errors.js';
import { DEFAULT_INDEX_BLOCK } from '../../options/table.js';

/** Reserves `count` consecutive indexes and resolves to the first. */
export type ReserveIndexes = (count: number) => Promise<number>;

/** After a failed reservation, the next try waits this long: a down store is not hammered per token. */
const RETRY_MS = 1_000;
/**
 * The longest a call waits for a block that is being reserved: longer than a slow fsync or
 * a busy primary's answer (hundreds of ms), well below the deadlines clients give a token
 * request (seconds), and below the cluster's 10 s reservation timeout, so a store that is
 * down answers UNAVAILABLE rather than a client's DEADLINE_EXCEEDED.
 */
export const INDEX_WAIT_MS = 2_000;
/**
 * The most calls held at once: the transport already bounds the calls in flight (streams
 * per connection, connections), so this is a backstop on memory (a timer and two
 * closures each), far above what a server answering tens of thousands of calls a second
 * gathers during one reservation.
 */
export const MAX_HELD_CALLS = 10_000;

/** A call held until a block arrives. */
interface Waiter {
  readonly resolve: (idx: number) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** The refusal of a call that gets no index: `why` says which of the reasons it is. */
function noIndex(why: string): JwtGrpcError {
  return new JwtGrpcError('ERR_STATUS_LIST_FULL', `no status list index is free: ${why}`);
}

/**
 * A reserve function over a counter in this process, for a single process (or the
 * cluster primary answering its workers): blocks follow each other from 0.
 *
 * @example
 * ```ts
 * const reserve = localReserve();
 * await reserve(4096); // 0
 * await reserve(4096); // 4096
 * ```
 */
export function localReserve(start = 0): ReserveIndexes {
  let next = start;
  return (count) => {
    const first = next;
    next += count;
    return Promise.resolve(first);
  };
}

/**
 * The longest a process hands out indexes from one block after reserving it. A list closes
 * when the shared counter passes its end, and every process stops issuing into it at most
 * this long after (a block is never used older), which bounds when the list may retire
 * (issuer.ts). A busy server uses a block in far less; an idle one reserves afresh at its
 * next call, which then waits for one reservation.
 */
export const MAX_BLOCK_AGE_MS = 60_000;

/** A block of indexes: `next` up to, not including, `end`, reserved at `atMs` (performance.now). */
interface Block {
  next: number;
  readonly end: number;
  readonly atMs: number;
}

/**
 * Hands out indexes below `size` from blocks that `reserve` grants. @internal
 *
 * @example
 * ```ts
 * const allocator = new IndexAllocator({ reserve: localReserve(), size: 1 << 20 });
 * await allocator.start();
 * allocator.next(); // 0
 * ```
 */
export class IndexAllocator {
  readonly #reserve: ReserveIndexes;
  readonly #size: number;
  readonly #blockSize: number;
  readonly #logger: Logger | undefined;
  #current: Block = { next: 0, end: 0, atMs: 0 };
  #spare: Block | undefined;
  #reserving = false;
  /** A reservation came back past the end of the list: no further one is asked for. */
  #full = false;
  #lastFailureMs = -Infinity;
  /** Calls held by `take` while a block is reserved: at most MAX_HELD_CALLS, each until INDEX_WAIT_MS. */
  readonly #waiters = new Set<Waiter>();

  constructor(options: { reserve: ReserveIndexes; size: number; blockSize?: number; logger?: Logger }) {
    this.#reserve = options.reserve;
    this.#size = options.size;
    this.#blockSize = options.blockSize ?? DEFAULT_INDEX_BLOCK;
    this.#logger = options.logger;
  }

  /** Reserves the first block; rejects when `reserve` does. */
  async start(): Promise<void> {
    this.#current = await this.#block();
  }

  /** The next free index, or undefined when none is reserved (the counter reached `size`, or the store is down). */
  next(): number | undefined {
    let block = this.#current;
    if (block.next >= block.end || this.#stale(block)) {
      const spare = this.#spare;
      this.#spare = undefined;
      if (spare === undefined || this.#stale(spare)) {
        this.#current = { next: 0, end: 0, atMs: 0 };
        this.#prefetch();
        return undefined;
      }
      block = this.#current = spare;
    }
    const idx = block.next++;
    if (this.#spare === undefined && block.end - block.next <= this.#blockSize / 2) this.#prefetch();
    return idx;
  }

  /**
   * The next free index; while none is reserved but a block is on its way, a promise of
   * one (at most {@link INDEX_WAIT_MS} later).
   * @throws JwtGrpcError `ERR_STATUS_LIST_FULL` when the counter reached `size`, the store failed
   * within the last second, or {@link MAX_HELD_CALLS} calls already wait; the promise rejects
   * with it when the block does not come in time.
   */
  take(): number | Promise<number> {
    const idx = this.next();
    if (idx !== undefined) return idx;
    if (this.#full) throw noIndex(`every index below ${this.#size} is taken`);
    if (!this.#reserving) throw noIndex('its index store is unreachable');
    if (this.#waiters.size >= MAX_HELD_CALLS) throw noIndex(`${this.#waiters.size} calls already wait for the next block of indexes`);
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(noIndex(`no block of indexes was reserved within ${INDEX_WAIT_MS} ms`));
        }, INDEX_WAIT_MS),
      };
      this.#waiters.add(waiter);
    });
  }

  /** A block arrived: the held calls get its indexes in the order they came; past its end they wait for the next. */
  #serveWaiters(): void {
    for (const waiter of this.#waiters) {
      const idx = this.next();
      if (idx === undefined) return;
      this.#waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve(idx);
    }
  }

  /** No block is coming: every held call is refused with `err`. */
  #refuseWaiters(err: JwtGrpcError): void {
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
    }
    this.#waiters.clear();
  }

  /** Whether `block` was reserved more than MAX_BLOCK_AGE_MS ago. */
  #stale(block: Block): boolean {
    return performance.now() - block.atMs > MAX_BLOCK_AGE_MS;
  }

  async #block(): Promise<Block> {
    const first = await this.#reserve(this.#blockSize);
    if (!Number.isSafeInteger(first) || first < 0)
      throw new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', `status list: reserve answered ${String(first)}, not an index`);
    // A block past the end is empty: no index is left.
    return { next: Math.min(first, this.#size), end: Math.min(first + this.#blockSize, this.#size), atMs: performance.now() };
  }

  #prefetch(): void {
    if (this.#full || this.#reserving || Date.now() - this.#lastFailureMs < RETRY_MS) return;
    this.#reserving = true;
    this.#block().then(
      (block) => {
        this.#reserving = false;
        if (block.next < block.end) {
          this.#spare = block;
          this.#serveWaiters();
        } else {
          this.#full = true;
          this.#logger?.error('status list: every index is taken, tokens cannot be issued', { size: this.#size });
          this.#refuseWaiters(noIndex(`every index below ${this.#size} is taken`));
        }
      },
      (err: unknown) => {
        this.#reserving = false;
        this.#lastFailureMs = Date.now();
        const message = err instanceof Error ? err.message : String(err);
        this.#logger?.warn('status list: cannot reserve indexes', { error: message });
        this.#refuseWaiters(noIndex(`its index store is unreachable (${message})`));
      },
    );
  }
}
