import type { ReserveIndexes } from '../revocation/status-list/allocator.js';
import { JwtGrpcError } from '../base/errors.js';
import type { PrimaryMessageOf, WorkerMessage } from './messages.js';

/** A block of status list indexes must come back from the primary within this long. */
const RESERVE_TIMEOUT_MS = 10_000;

/** A reservation waiting for the primary's answer. */
interface Waiting {
  readonly resolve: (first: number) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * A worker's status list index blocks, reserved by the primary, which alone counts them
 * for all workers (`jwt-grpc:reserve-status-indexes`, answered by `jwt-grpc:status-indexes`
 * with the same id). An answer that does not come within {@link RESERVE_TIMEOUT_MS}
 * rejects; a late one is dropped.
 *
 * @example
 * ```ts
 * const reservations = new IndexReservations(send);
 * const relay = new PrimaryRelayStore(start.revocations, send, reservations.reserve);
 * ```
 * @internal
 */
export class IndexReservations {
  readonly #send: (message: WorkerMessage) => void;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 0;

  constructor(send: (message: WorkerMessage) => void) {
    this.#send = send;
  }

  /** Asks the primary for `count` indexes; resolves with the first of the block. */
  readonly reserve: ReserveIndexes = (count) =>
    new Promise<number>((resolve, reject) => {
      const id = ++this.#nextId;
      const timer = setTimeout(() => this.#timedOut(id), RESERVE_TIMEOUT_MS);
      this.#waiting.set(id, { resolve, reject, timer });
      this.#send({ type: 'jwt-grpc:reserve-status-indexes', id, count });
    });

  /** The primary's answer. */
  answered(message: PrimaryMessageOf<'jwt-grpc:status-indexes'>): void {
    const waiting = this.#take(message.id);
    if (waiting === undefined) return;
    if (message.first === undefined)
      waiting.reject(new JwtGrpcError('ERR_CLUSTER', `the primary reserved no status list indexes: ${message.error ?? 'no reason given'}`));
    else waiting.resolve(message.first);
  }

  #timedOut(id: number): void {
    this.#take(id)?.reject(
      new JwtGrpcError('ERR_CLUSTER', `the primary did not reserve status list indexes within ${RESERVE_TIMEOUT_MS} ms`),
    );
  }

  #take(id: number): Waiting | undefined {
    const waiting = this.#waiting.get(id);
    this.#waiting.delete(id);
    clearTimeout(waiting?.timer);
    return waiting;
  }
}
