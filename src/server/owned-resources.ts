/**
 * What a part has opened, released in the reverse order of opening: the shape of
 * ECMAScript's `AsyncDisposableStack` (`use`, `adopt`, `defer`, `disposeAsync`), kept as a
 * class of its own on every Node for two reasons. Node 22, which this package supports
 * (package.json `engines`), has no `AsyncDisposableStack` (Node 24 has). And a server's
 * close is called by more than one path (a failed start, `close()`, a signal): each caller
 * must wait for the same releases to finish, where a second `disposeAsync` of
 * `AsyncDisposableStack` resolves at once, before the first one's releases are done
 * (ECMAScript explicit resource management, AsyncDisposableStack.prototype.disposeAsync).
 * A fallback beside the native stack would still need this waiting, and two paths to test.
 */
import { JwtGrpcError } from '../base/errors.js';

type Release = () => unknown;

/**
 * A stack of releases. Every release runs, in reverse order, even when one before it
 * fails; `disposeAsync` then rejects with the one error, or an `AggregateError` of all of
 * them. Unlike `AsyncDisposableStack`, a second `disposeAsync` returns the first one's
 * promise, so a caller that comes late still waits for the releases to finish. @internal
 *
 * @example
 * ```ts
 * const owned = new OwnedResources();
 * try {
 *   const store = owned.adopt(await openStore(), (opened) => opened.close());
 *   owned.defer(() => clearInterval(timer));
 *   await startServing(store);
 * } catch (err) {
 *   await owned.disposeAsync(); // the timer, then the store
 *   throw err;
 * }
 * ```
 */
export class OwnedResources implements AsyncDisposable {
  readonly #releases: Release[] = [];
  #disposing: Promise<void> | undefined;

  /** True once `disposeAsync` has been called: nothing more can be owned. */
  get disposed(): boolean {
    return this.#disposing !== undefined;
  }

  /** Owns `resource`: its `Symbol.asyncDispose` (or `Symbol.dispose`) runs at disposal. Returns it; null and undefined are skipped. */
  use<T extends AsyncDisposable | Disposable | null | undefined>(resource: T): T {
    if (resource === null || resource === undefined) return resource;
    const dispose = (resource as Partial<AsyncDisposable>)[Symbol.asyncDispose] ?? (resource as Partial<Disposable>)[Symbol.dispose];
    if (typeof dispose !== 'function')
      throw new JwtGrpcError('ERR_SERVER_STATE', 'owned resources: use() needs a disposable; adopt() takes a release');
    this.#push(() => dispose.call(resource));
    return resource;
  }

  /** Owns `value`, released by `release(value)`. Returns it. */
  adopt<T>(value: T, release: (value: T) => unknown): T {
    this.#push(() => release(value));
    return value;
  }

  /** Runs `release` at disposal. */
  defer(release: Release): void {
    this.#push(release);
  }

  /** Releases everything owned, last owned first. Idempotent: every call returns the same promise. */
  disposeAsync(): Promise<void> {
    this.#disposing ??= this.#releaseAll();
    return this.#disposing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.disposeAsync();
  }

  #push(release: Release): void {
    // Owning something after the releases have run would leak it: refused, as AsyncDisposableStack refuses.
    if (this.#disposing !== undefined)
      throw new JwtGrpcError('ERR_SERVER_STATE', 'owned resources: already released, nothing more can be owned');
    this.#releases.push(release);
  }

  async #releaseAll(): Promise<void> {
    const errors: unknown[] = [];
    for (const release of this.#releases.splice(0).reverse()) {
      try {
        await release();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} owned resources failed to release`);
  }
}

/**
 * `release` run at most once: later calls return the first call's promise. For what one
 * path releases early (a close with its grace period) and the owner releases again at the
 * end (at once), whichever comes first. @internal
 */
export function releaseOnce<A extends unknown[]>(release: (...args: A) => unknown): (...args: A) => Promise<void> {
  let released: Promise<void> | undefined;
  const start = async (args: A): Promise<void> => {
    await release(...args);
  };
  return (...args) => {
    // Called now, not a microtask later: a close that stops accepting does so at once.
    released ??= start(args);
    return released;
  };
}
