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

/** One client address's ledger: the bytes its connections hold, and how many there are. */
export class PeerLedger extends MemoryLedger {
  connections = 0;

  constructor(readonly peer: string) {
    super();
  }
}

/**
 * The bytes each client address holds, over all its connections (process-memory.ts holds
 * the process's one): what its share of the process's ceiling is checked against. An
 * address leaves the map with its last connection.
 */
export class PeerLedgers {
  readonly #byPeer = new Map<string, PeerLedger>();

  /** The ledger of `peer`, for one more connection: give it back with {@link leave}. */
  join(peer: string): PeerLedger {
    let ledger = this.#byPeer.get(peer);
    if (ledger === undefined) {
      ledger = new PeerLedger(peer);
      this.#byPeer.set(peer, ledger);
    }
    ledger.connections += 1;
    return ledger;
  }

  /** One connection of `ledger`'s address is gone, having released what it held. */
  leave(ledger: PeerLedger): void {
    if (--ledger.connections === 0 && this.#byPeer.get(ledger.peer) === ledger) this.#byPeer.delete(ledger.peer);
  }

  /** Addresses with a connection open: for tests. */
  get size(): number {
    return this.#byPeer.size;
  }
}
