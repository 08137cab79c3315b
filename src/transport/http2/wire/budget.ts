/**
 * A token bucket: `burst` events at once, then `rate` a second. The Rapid Reset guard, the
 * glitch budget and the refused-stream budget are each one; a bucket reads the clock only
 * when an event is charged, so a connection that trips nothing costs nothing.
 */
import { performance } from 'node:perf_hooks';

export class Budget {
  readonly #burst: number;
  readonly #rate: number;
  #tokens: number;
  #checkedAt = 0;

  constructor(burst: number, rate: number) {
    this.#burst = burst;
    this.#rate = rate;
    this.#tokens = burst;
  }

  /** Charges one event: false once the budget is spent. */
  take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#checkedAt) / 1000) * this.#rate);
    this.#checkedAt = now;
    return --this.#tokens >= 0;
  }
}

/**
 * Bytes held, counted by every connection that shares it: the process-wide memory
 * ceiling's count (process-memory.ts holds the process's one). Integer
 * adds and subtracts only, so charging it costs a call nothing measurable.
 */
export class MemoryLedger {
  held = 0;
}
