import { JwtGrpcError } from '../base/errors.js';
import { importKeys } from '../keys/import.js';
import type { KeySet } from '../keys/key-set.js';
import type { JwtPolicy } from '../policy/document.js';
import type { PrimaryMessageOf, WorkerMessage } from './messages.js';

type KeysMessage = PrimaryMessageOf<'jwt-grpc:keys'>;
type PolicyMessage = PrimaryMessageOf<'jwt-grpc:policy'>;

/** What a spare worker makes its server with once it takes a slot. @internal */
export interface SpareState {
  readonly keys: KeySet;
  readonly policy: JwtPolicy | undefined;
}

/**
 * A spare worker's keys and policy while it waits for a slot: the start message's, then
 * each reload's. A spare has no server yet (a server made before it listens has no
 * service to swap keys into), so a reload is imported here, acknowledged at once (the
 * primary's reload does not wait on a worker that serves nothing), and the server the
 * spare makes when it takes a slot starts with it: no call is ever signed with keys
 * reloaded away.
 *
 * @example
 * ```ts
 * const hold = new SpareHold({ keys: importKeys(start.jwks), policy: start.policy }, send);
 * hold.keys(message); // imported, acknowledged
 * await listen(hold.state);
 * ```
 * @internal
 */
export class SpareHold {
  #state: SpareState;
  readonly #send: (message: WorkerMessage) => void;

  constructor(state: SpareState, send: (message: WorkerMessage) => void) {
    this.#state = state;
    this.#send = send;
  }

  get state(): SpareState {
    return this.#state;
  }

  /** Reloaded keys: imported now; a set that cannot be imported is refused and the spare keeps what it had. */
  keys(message: KeysMessage): void {
    try {
      this.#state = { ...this.#state, keys: importKeys(message.jwks) };
      this.#send({ type: 'jwt-grpc:keys-applied', generation: message.generation });
    } catch (err) {
      const error = err instanceof JwtGrpcError ? err.message : String(err);
      this.#send({ type: 'jwt-grpc:keys-applied', generation: message.generation, error });
    }
  }

  /** A reloaded policy, checked by the primary: the spare's server will start with it. */
  policy(message: PolicyMessage): void {
    this.#state = { ...this.#state, policy: message.policy };
    this.#send({ type: 'jwt-grpc:policy-applied', generation: message.generation });
  }
}
