import type { Worker } from 'node:cluster';
import type { Logger } from '../base/log.js';
import type { PrimaryMessage } from './messages.js';

/** How long a reload waits for every worker to say it put the reloaded keys or policy in use. */
const RELOAD_ACK_MS = 10_000;

/** Sends, ignoring a channel that closed since it was checked: the worker's exit is handled where it is seen. @internal */
export function sendTo(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message, undefined, () => undefined);
}

/**
 * Hands something reloaded in the primary (keys, the policy) to every worker and waits
 * until each has acknowledged its generation, or exited, or {@link RELOAD_ACK_MS} passed.
 * A worker that could not apply it is logged by pid; the others keep what they applied.
 * @internal
 */
export class HandOut {
  readonly #what: string;
  readonly #logger: Logger;
  readonly #acks = new Map<Worker, (error: string | undefined) => void>();
  #generation = 0;

  constructor(what: string, logger: Logger) {
    this.#what = what;
    this.#logger = logger;
  }

  /** A worker's acknowledgement; one of an older generation is late and ignored. */
  acknowledged(worker: Worker, generation: number, error: string | undefined): void {
    if (generation === this.#generation) this.#acks.get(worker)?.(error);
  }

  /** A worker exited: nothing more to wait for from it. */
  exited(worker: Worker): void {
    this.#acks.get(worker)?.(undefined);
  }

  /** Sends `message` to every connected worker and resolves once each has answered. */
  async send(workers: readonly Worker[], generation: number, message: PrimaryMessage): Promise<void> {
    this.#generation = generation;
    const connected = workers.filter((worker) => worker.isConnected());
    const answers = connected.map(
      (worker) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => answer('no answer'), RELOAD_ACK_MS);
          const answer = (error: string | undefined): void => {
            clearTimeout(timer);
            this.#acks.delete(worker);
            if (error !== undefined)
              this.#logger.error(`worker ${worker.process.pid} did not put the reloaded ${this.#what} in use: ${error}`);
            resolve();
          };
          this.#acks.set(worker, answer);
          sendTo(worker, message);
        }),
    );
    await Promise.all(answers);
    this.#logger.info(`reloaded ${this.#what} handed to ${connected.length} workers`);
  }
}
