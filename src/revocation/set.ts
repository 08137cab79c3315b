/**
 * The revoked token ids a server holds in memory: a Map for the lookup VerifyJwt makes,
 * and a min-heap of expiry times so that a sweep drops what has expired without looking
 * at the rest. No timer per entry: one sweep, on one interval, for the whole set; memory
 * stays bounded by the revoked tokens that are still valid. @internal
 */
import type { Revocation } from '../contracts/revocation-store.js';

/** One heap node: when `jti` may go. A node whose entry has since been extended is stale and skipped. */
interface Expiry {
  readonly at: number;
  readonly jti: string;
}

export class RevocationSet {
  readonly #entries = new Map<string, Revocation>();
  readonly #heap: Expiry[] = [];
  readonly #clock: () => number;

  /** `clock`: now, in Unix seconds (tests pass their own). */
  constructor(clock: () => number = () => Date.now() / 1000) {
    this.#clock = clock;
  }

  /** Entries held (some may have expired since the last sweep). */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether `jti` is revoked. VerifyJwt's per-call check: one Map lookup. */
  has(jti: unknown): boolean {
    return typeof jti === 'string' && this.#entries.has(jti);
  }

  get(jti: string): Revocation | undefined {
    return this.#entries.get(jti);
  }

  /**
   * Adds `revocation`, or extends an entry of the same jti to the later expiry. Returns
   * false when the set held it already until at least as late (nothing changed), and for
   * one that has expired already (nothing to keep). An entry held until at least as late
   * takes the status-list index it lacked (revoked by jti first, then by the token).
   */
  add(revocation: Revocation): boolean {
    if (revocation.expiresAt <= this.#clock()) return false;
    const known = this.#entries.get(revocation.jti);
    if (known !== undefined && known.expiresAt >= revocation.expiresAt) {
      if (revocation.statusIndex === undefined || known.statusIndex !== undefined) return false;
      this.#entries.set(revocation.jti, { ...known, statusIndex: revocation.statusIndex });
      return true;
    }
    this.#entries.set(revocation.jti, revocation);
    this.#push({ at: revocation.expiresAt, jti: revocation.jti });
    return true;
  }

  /** Drops every entry whose expiry has passed; returns how many went. */
  sweep(): number {
    const now = this.#clock();
    let dropped = 0;
    while (this.#heap.length > 0 && (this.#heap[0] as Expiry).at <= now) {
      const { at, jti } = this.#pop();
      const entry = this.#entries.get(jti);
      // A later add of the same jti pushed a later expiry: this node is stale.
      if (entry !== undefined && entry.expiresAt === at) {
        this.#entries.delete(jti);
        dropped += 1;
      }
    }
    return dropped;
  }

  /** The entries still held, in no particular order. */
  values(): IterableIterator<Revocation> {
    return this.#entries.values();
  }

  #push(node: Expiry): void {
    const heap = this.#heap;
    heap.push(node);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as Expiry).at <= node.at) break;
      heap[i] = heap[parent] as Expiry;
      i = parent;
    }
    heap[i] = node;
  }

  #pop(): Expiry {
    const heap = this.#heap;
    const top = heap[0] as Expiry;
    const last = heap.pop() as Expiry;
    if (heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as Expiry).at < (heap[left] as Expiry).at ? right : left;
      if ((heap[child] as Expiry).at >= last.at) break;
      heap[i] = heap[child] as Expiry;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
