import type { Logger } from '../base/log.js';

/** A message of the cluster's IPC protocol: tagged by `type` (src/cluster/messages.ts). */
interface Tagged {
  readonly type: string;
}

/**
 * One handler per message type of the union `M`, each given its own member of the union
 * and the peer it came `from`: a type of `M` without a handler is a compile error.
 * @internal
 */
export type HandlerTable<M extends Tagged, From> = {
  readonly [T in M['type']]: (message: Extract<M, { readonly type: T }>, from: From) => void;
};

/** How many characters of a refused type a log line repeats: the peer chose it, so it is cut short. */
const LOGGED_TYPE_CHARS = 64;

/**
 * Routes the IPC messages of one direction through a table keyed by their `type`. A
 * message the table has no handler for (not an object, no type, a type of the other
 * direction or of another version) fails closed: it is refused with a warning naming its
 * type and where it came from, reaches no handler, and throws nothing, so a stray message
 * neither crashes the process nor changes its state. The message itself is never logged:
 * a start message misdirected holds private keys.
 *
 * @example
 * ```ts
 * const router = new MessageRouter<WorkerMessage, Worker>(table, logger, (worker) => ({ workerPid: worker.process.pid }));
 * worker.on('message', (message: unknown) => router.route(message, worker));
 * ```
 * @internal
 */
export class MessageRouter<M extends Tagged, From> {
  readonly #table: HandlerTable<M, From>;
  readonly #logger: Logger;
  readonly #describe: (from: From) => Readonly<Record<string, unknown>>;

  /** `describe` gives the log fields that say where a refused message came from. */
  constructor(table: HandlerTable<M, From>, logger: Logger, describe: (from: From) => Readonly<Record<string, unknown>>) {
    this.#table = table;
    this.#logger = logger;
    this.#describe = describe;
  }

  /** Hands `message` to the handler of its type; false when it was refused. */
  route(message: unknown, from: From): boolean {
    const type = (message as { readonly type?: unknown } | null | undefined)?.type;
    if (typeof type !== 'string' || !Object.hasOwn(this.#table, type)) {
      this.#refuse(type, from);
      return false;
    }
    const handler = this.#table[type as M['type']] as (message: M, from: From) => void;
    handler(message as M, from);
    return true;
  }

  #refuse(type: unknown, from: From): void {
    const shown = typeof type === 'string' ? JSON.stringify(type.slice(0, LOGGED_TYPE_CHARS)) : `(none: ${typeof type})`;
    this.#logger.warn(`refused an IPC message of unknown type ${shown}`, this.#describe(from));
  }
}
