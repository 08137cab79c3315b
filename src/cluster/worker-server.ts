import { JwtGrpcError } from '../base/errors.js';
import { importKeys } from '../keys/import.js';
import { describeKeys } from '../keys/reload.js';
import type { Logger } from '../base/log.js';
import { describePolicy } from '../policy/reload.js';
import type { InProcessServer } from './in-process.js';
import type { PrimaryMessageOf, WorkerMessage } from './messages.js';

type KeysMessage = PrimaryMessageOf<'jwt-grpc:keys'>;
type PolicyMessage = PrimaryMessageOf<'jwt-grpc:policy'>;

function problem(err: unknown): string {
  return err instanceof JwtGrpcError ? err.message : String(err);
}

/**
 * A worker's server as the primary's messages reach it. The worker listens to the primary
 * from the start: keys or a policy reloaded while it binds wait here (the latest of each)
 * and are swapped in once it listens. Each swap is acknowledged with its generation, or
 * with the reason it failed (the server keeps what it had).
 *
 * @example
 * ```ts
 * const target = new WorkerServer(logger, send);
 * target.keys(message); // held until listening(server)
 * target.listening(await listenInProcess(options, keys));
 * ```
 * @internal
 */
export class WorkerServer {
  readonly #logger: Logger;
  readonly #send: (message: WorkerMessage) => void;
  #server: InProcessServer | undefined;
  #heldKeys: KeysMessage | undefined;
  #heldPolicy: PolicyMessage | undefined;

  constructor(logger: Logger, send: (message: WorkerMessage) => void) {
    this.#logger = logger;
    this.#send = send;
  }

  /** The server listens: what was reloaded meanwhile goes in now. */
  listening(server: InProcessServer): void {
    this.#server = server;
    if (this.#heldKeys !== undefined) this.#swapKeys(server, this.#heldKeys);
    if (this.#heldPolicy !== undefined) this.#swapPolicy(server, this.#heldPolicy);
    this.#heldKeys = undefined;
    this.#heldPolicy = undefined;
  }

  /** Reloaded keys from the primary. */
  keys(message: KeysMessage): void {
    if (this.#server === undefined) this.#heldKeys = message;
    else this.#swapKeys(this.#server, message);
  }

  /** A reloaded policy from the primary. */
  policy(message: PolicyMessage): void {
    if (this.#server === undefined) this.#heldPolicy = message;
    else this.#swapPolicy(this.#server, message);
  }

  /** The primary's shutdown: drains within `graceMs`. Before listening there is nothing to drain; the primary kills a worker that does not exit. */
  shutdown(graceMs: number): void {
    void this.#server?.close(graceMs);
  }

  #swapKeys(server: InProcessServer, message: KeysMessage): void {
    try {
      server.server.service.setKeys(importKeys(message.jwks));
      this.#logger.info(`worker ${process.pid} reloaded keys`, { keys: describeKeys(server.server.service.keys) });
      this.#send({ type: 'jwt-grpc:keys-applied', generation: message.generation });
    } catch (err) {
      this.#send({ type: 'jwt-grpc:keys-applied', generation: message.generation, error: problem(err) });
    }
  }

  #swapPolicy(server: InProcessServer, message: PolicyMessage): void {
    try {
      server.server.service.setPolicy(message.policy);
      this.#logger.info(`worker ${process.pid} reloaded the policy`, describePolicy(message.policy, message.generation));
      this.#send({ type: 'jwt-grpc:policy-applied', generation: message.generation });
    } catch (err) {
      this.#send({ type: 'jwt-grpc:policy-applied', generation: message.generation, error: problem(err) });
    }
  }
}
