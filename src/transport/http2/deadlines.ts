/**
 * The deadlines of a server's calls in one binary min-heap under one Node timer, instead
 * of a Node timer per call: most clients send `grpc-timeout` on every call (ghz and many
 * others a default of 20 s), and a Node Timeout is an object created, inserted into a
 * timer list and unlinked again for every call; the heap costs one array slot per call
 * and one timer in all.
 */
import { performance } from 'node:perf_hooks';
import { MAX_TIMER_MS } from '../../options/table.js';

/** What the heap orders: the call carries its own slot, so removal is O(log n). */
export interface DeadlineEntry {
  /** `performance.now()` time at which the call expires. */
  deadlineAt: number;
  /** Position in the heap, -1 when not in it. */
  deadlineSlot: number;
  /** Called once when the deadline passes while the entry is still in the heap. */
  deadlinePassed(): void;
}

export class Deadlines {
  readonly #heap: DeadlineEntry[] = [];
  #timer: NodeJS.Timeout | undefined = undefined;
  /** When the armed timer fires (performance.now() time). */
  #timerAt = Number.POSITIVE_INFINITY;

  /** Tracks `entry` until `timeoutMs` from now; it is called back unless removed first. */
  add(entry: DeadlineEntry, timeoutMs: number): void {
    entry.deadlineAt = performance.now() + timeoutMs;
    const heap = this.#heap;
    entry.deadlineSlot = heap.length;
    heap.push(entry);
    this.#up(entry.deadlineSlot);
    // The armed timer is kept while it fires no later than needed: a heap whose calls keep
    // finishing before their deadline costs no timer work at all.
    if (entry.deadlineAt < this.#timerAt) this.#arm(entry.deadlineAt);
  }

  remove(entry: DeadlineEntry): void {
    const slot = entry.deadlineSlot;
    if (slot < 0) return;
    entry.deadlineSlot = -1;
    const heap = this.#heap;
    const last = heap.pop() as DeadlineEntry;
    if (slot === heap.length) return;
    heap[slot] = last;
    last.deadlineSlot = slot;
    this.#down(slot);
    this.#up(last.deadlineSlot);
  }

  /** Stops the timer (server closed); entries stay until removed. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#timerAt = at;
    const delay = Math.min(Math.max(0, Math.ceil(at - performance.now())), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const heap = this.#heap;
    const now = performance.now();
    while (heap.length > 0 && (heap[0] as DeadlineEntry).deadlineAt <= now) {
      const entry = heap[0] as DeadlineEntry;
      this.remove(entry);
      entry.deadlinePassed();
    }
    if (heap.length > 0) this.#arm((heap[0] as DeadlineEntry).deadlineAt);
  }

  #up(slot: number): void {
    const heap = this.#heap;
    const entry = heap[slot] as DeadlineEntry;
    while (slot > 0) {
      const parentSlot = (slot - 1) >> 1;
      const parent = heap[parentSlot] as DeadlineEntry;
      if (parent.deadlineAt <= entry.deadlineAt) break;
      heap[slot] = parent;
      parent.deadlineSlot = slot;
      slot = parentSlot;
    }
    heap[slot] = entry;
    entry.deadlineSlot = slot;
  }

  #down(slot: number): void {
    const heap = this.#heap;
    const length = heap.length;
    const entry = heap[slot] as DeadlineEntry;
    for (;;) {
      let child = 2 * slot + 1;
      if (child >= length) break;
      const right = child + 1;
      if (right < length && (heap[right] as DeadlineEntry).deadlineAt < (heap[child] as DeadlineEntry).deadlineAt) child = right;
      const smallest = heap[child] as DeadlineEntry;
      if (smallest.deadlineAt >= entry.deadlineAt) break;
      heap[slot] = smallest;
      smallest.deadlineSlot = slot;
      slot = child;
    }
    heap[slot] = entry;
    entry.deadlineSlot = slot;
  }
}
