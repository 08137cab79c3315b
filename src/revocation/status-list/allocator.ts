/**
 * Index allocation for the Status List: every token gets its own index (draft-ietf-oauth-
 * status-list-20 section 13.3: the issuer MUST prevent unintended double allocation), and
 * the per-token cost stays one integer increment. Indexes come in blocks from `reserve`:
 * a server's revocation store (RevocationStore.reserveStatusIndexes: the file's
 * reservation line, Redis `INCRBY`), directly or through the cluster primary for its
 * workers, so they never repeat after a restart; the next block is reserved in
 * the background when half of the current one is used, so `next` never waits.
 */
import type { Logger } from '../../log.js';
import { JwtGrpcError } from '../../errors.js';

/** Reserves `count` consecutive indexes and resolves to the first. */
export type ReserveIndexes = (count: number) => Promise<number>;

/** Indexes reserved at a time: a worker that dies wastes at most this many. */
export const DEFAULT_INDEX_BLOCK = 4096;
/** After a failed reservation, the next try waits this long: a down store is not hammered per token. */
const RETRY_MS = 1_000;

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

/** A block of indexes: `next` up to, not including, `end`. */
interface Block {
  next: number;
  readonly end: number;
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
  #current: Block = { next: 0, end: 0 };
  #spare: Block | undefined;
  #reserving = false;
  /** A reservation came back past the end of the list: no further one is asked for. */
  #full = false;
  #lastFailureMs = -Infinity;

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

  /** The next free index, or undefined when none is reserved (the list is full, or the store is down). */
  next(): number | undefined {
    let block = this.#current;
    if (block.next >= block.end) {
      if (this.#spare === undefined) {
        this.#prefetch();
        return undefined;
      }
      block = this.#current = this.#spare;
      this.#spare = undefined;
    }
    const idx = block.next++;
    if (this.#spare === undefined && block.end - block.next <= this.#blockSize / 2) this.#prefetch();
    return idx;
  }

  async #block(): Promise<Block> {
    const first = await this.#reserve(this.#blockSize);
    if (!Number.isSafeInteger(first) || first < 0)
      throw new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', `status list: reserve answered ${String(first)}, not an index`);
    // A block past the end of the list is empty: the list is full.
    return { next: Math.min(first, this.#size), end: Math.min(first + this.#blockSize, this.#size) };
  }

  #prefetch(): void {
    if (this.#full || this.#reserving || Date.now() - this.#lastFailureMs < RETRY_MS) return;
    this.#reserving = true;
    this.#block().then(
      (block) => {
        this.#reserving = false;
        if (block.next < block.end) this.#spare = block;
        else {
          this.#full = true;
          this.#logger?.error('status list is full: tokens cannot be issued until it is replaced', { size: this.#size });
        }
      },
      (err: unknown) => {
        this.#reserving = false;
        this.#lastFailureMs = Date.now();
        this.#logger?.warn('status list: cannot reserve indexes', { error: err instanceof Error ? err.message : String(err) });
      },
    );
  }
}
