/**
 * Revocation in a cluster. The primary owns the store (the file, Redis): a worker's
 * RevokeJwt goes to it over IPC (`jwt-grpc:revoke`), the primary makes it durable, sends
 * it to every worker (`jwt-grpc:revoked`) and only then answers the worker that asked
 * (`jwt-grpc:revoke-done`), which answers its caller. The IPC channel keeps order, so the
 * asking worker holds the revocation before its answer arrives; every other worker has
 * been sent it by then. A worker that starts gets the revocations held now in its start
 * message. @internal
 */
import type { Worker } from 'node:cluster';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { RELAYED_STORE_KIND, type Revocations } from '../revocation/revocations.js';
import type { ReserveIndexes } from '../revocation/status-list/allocator.js';
import type { Revocation, RevocationStore } from '../contracts/revocation-store.js';
import type { PrimaryMessage, WorkerMessage } from './messages.js';

/** How long a worker waits for the primary to store a revocation before it answers UNAVAILABLE. */
const PRIMARY_ANSWER_MS = 10_000;

/** A worker's store: its primary, reached over IPC. */
export class PrimaryRelayStore implements RevocationStore {
  readonly kind = RELAYED_STORE_KIND;
  readonly #send: (message: WorkerMessage) => void;
  readonly #pending = new Map<number, { resolve: () => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  #nextId = 0;
  #onRevoked: ((revocations: readonly Revocation[]) => void) | undefined;
  /** What arrives before the server starts the store: the start message's revocations, then broadcasts. */
  #early: Revocation[];
  #closed = false;
  /** Status-list index blocks, from the primary's one counter (the store's, so durable). */
  readonly reserveStatusIndexes: ReserveIndexes;

  constructor(initial: readonly Revocation[], send: (message: WorkerMessage) => void, reserve: ReserveIndexes) {
    this.#early = [...initial];
    this.#send = send;
    this.reserveStatusIndexes = reserve;
  }

  get up(): boolean {
    return !this.#closed;
  }

  async start(onRevoked: (revocations: readonly Revocation[]) => void): Promise<void> {
    this.#onRevoked = onRevoked;
    const early = this.#early;
    this.#early = [];
    onRevoked(early);
  }

  /** A `jwt-grpc:revoked` broadcast from the primary. */
  receive(revocations: readonly Revocation[]): void {
    if (this.#onRevoked === undefined) this.#early.push(...revocations);
    else this.#onRevoked(revocations);
  }

  /** The primary's `jwt-grpc:revoke-done`. */
  settle(id: number, error: string | undefined): void {
    const waiting = this.#pending.get(id);
    if (waiting === undefined) return;
    this.#pending.delete(id);
    clearTimeout(waiting.timer);
    if (error === undefined) waiting.resolve();
    else waiting.reject(new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', error));
  }

  add(revocation: Revocation): Promise<void> {
    if (this.#closed)
      return Promise.reject(
        new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', 'this worker is closing: no revocation reaches the primary'),
      );
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => this.settle(id, `the cluster primary did not answer within ${PRIMARY_ANSWER_MS} ms`),
        PRIMARY_ANSWER_MS,
      );
      this.#pending.set(id, { resolve, reject, timer });
      this.#send({ type: 'jwt-grpc:revoke', id, revocation });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) this.settle(id, 'this worker is closing');
  }
}

/** A revocation as a worker sent it, checked: the IPC channel is ours, but a bad value must not reach the store. */
function isRevocation(value: unknown): value is Revocation {
  const { jti, expiresAt, reason, statusIndex } = (value ?? {}) as Partial<Revocation>;
  return (
    typeof jti === 'string' &&
    jti.length > 0 &&
    typeof expiresAt === 'number' &&
    Number.isFinite(expiresAt) &&
    (reason === undefined || typeof reason === 'string') &&
    (statusIndex === undefined || (Number.isSafeInteger(statusIndex) && statusIndex >= 0))
  );
}

/**
 * The primary's side: stores a worker's revocation, broadcasts it to `workers()`, then
 * answers the worker that asked.
 */
export function serveWorkerRevoke(
  revocations: Revocations,
  workers: () => readonly Worker[],
  asker: Worker,
  message: Extract<WorkerMessage, { type: 'jwt-grpc:revoke' }>,
  logger: Logger,
): void {
  const answer = (error?: string): void => {
    if (asker.isConnected())
      asker.send(
        { type: 'jwt-grpc:revoke-done', id: message.id, ...(error !== undefined && { error }) } satisfies PrimaryMessage,
        undefined,
        () => undefined,
      );
  };
  if (!isRevocation(message.revocation)) {
    answer('the primary refused a malformed revocation');
    return;
  }
  const revocation = message.revocation;
  revocations.revoke(revocation).then(
    () => {
      broadcastRevoked(workers(), [revocation]);
      answer();
    },
    (err: unknown) => {
      logger.error(`revocation store refused a revocation: ${(err as Error).message}`, { jti: revocation.jti });
      answer((err as Error).message);
    },
  );
}

/** Sends revocations to every worker (those that arrive from the store, and those a worker asked for). */
export function broadcastRevoked(workers: readonly Worker[], revocations: readonly Revocation[]): void {
  if (revocations.length === 0) return;
  const message: PrimaryMessage = { type: 'jwt-grpc:revoked', revocations };
  for (const worker of workers) if (worker.isConnected()) worker.send(message, undefined, () => undefined);
}
