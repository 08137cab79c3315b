/**
 * The things a server holds open (connections, sessions), and when the last has closed: what
 * a drain waits for where node:net's own close cannot count them (a connection a cluster's
 * primary handed over was never accepted by the server that serves it).
 *
 * @example
 * ```ts
 * const open = new OpenSet<Socket>();
 * open.add(socket);
 * socket.once('close', () => open.delete(socket));
 * await open.closed(); // once none is open
 * ```
 * @internal
 */
export class OpenSet<T> implements Iterable<T> {
  readonly #open = new Set<T>();
  /** What `closed` handed out while some were open, and its settle: when the last closes. */
  #lastClosed: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;

  get size(): number {
    return this.#open.size;
  }

  add(item: T): void {
    this.#open.add(item);
  }

  /** `item` has closed; the last one settles every `closed` waiting. */
  delete(item: T): void {
    if (!this.#open.delete(item) || this.#open.size > 0) return;
    this.#lastClosed?.resolve();
    this.#lastClosed = undefined;
  }

  /** Resolves once none is open: at once when none is. */
  closed(): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    if (this.#lastClosed === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => (resolve = settle));
      this.#lastClosed = { promise, resolve };
    }
    return this.#lastClosed.promise;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.#open[Symbol.iterator]();
  }
}
