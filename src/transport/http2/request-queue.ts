import { REQUEST_QUEUE_HIGH_WATER_MARK } from './defaults.js';
import { internalError } from '../../base/assert.js';

/**
 * The request messages of a client-streaming or bidi call as an async iterator. Messages
 * the handler has not taken yet are queued; past the high-water mark the HTTP/2 stream is
 * paused, so HTTP/2 flow control holds the client back instead of memory growing.
 */
/** What a queue holds back: an HTTP/2 stream, or any exchange (../protocols/exchange.ts). */
export interface Pausable {
  pause(): void;
  resume(): void;
}

export class RequestQueue<T> implements AsyncIterableIterator<T> {
  readonly #stream: Pausable;
  #items: T[] = [];
  #ended = false;
  #error: unknown = undefined;
  #failed = false;
  #returned = false;
  #paused = false;
  #waiter: { resolve(result: IteratorResult<T>): void; reject(err: unknown): void } | undefined;

  constructor(stream: Pausable) {
    this.#stream = stream;
  }

  /** A decoded message from the client. */
  push(item: T): void {
    if (this.#returned || this.#failed) return;
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.resolve({ value: item, done: false });
      return;
    }
    this.#items.push(item);
    if (!this.#paused && this.#items.length >= REQUEST_QUEUE_HIGH_WATER_MARK) {
      this.#paused = true;
      this.#stream.pause();
    }
  }

  /** The client half-closed: the iteration ends after the queued messages. */
  end(): void {
    this.#ended = true;
    const waiter = this.#waiter;
    if (waiter !== undefined && this.#items.length === 0) {
      this.#waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
  }

  /** The call ended (cancelled, deadline, bad message): the iteration throws `error` now. */
  fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#error = error;
    this.#items = [];
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#failed) return Promise.reject(this.#error);
    if (this.#items.length > 0) {
      const value = this.#items.shift() as T;
      if (this.#paused && this.#items.length <= REQUEST_QUEUE_HIGH_WATER_MARK / 2) {
        this.#paused = false;
        this.#stream.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#ended || this.#returned) return Promise.resolve({ value: undefined, done: true });
    if (this.#waiter !== undefined)
      return Promise.reject(internalError('RequestQueue: next() called again before the previous one settled'));
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** The handler stopped iterating (`break`): later messages are read and dropped. */
  return(): Promise<IteratorResult<T>> {
    this.#returned = true;
    this.#items = [];
    if (this.#paused) {
      this.#paused = false;
      this.#stream.resume();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
