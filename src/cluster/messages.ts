import type { Jwk } from '../keys/export.js';
import type { JwtPolicy } from '../policy/document.js';
import type { MetricsAnswerMessage, MetricsRequestMessage } from '../metrics/cluster.js';
import type { Revocation } from '../contracts/revocation-store.js';

/** A port the primary holds and hands each connection of to a worker: gRPC, and discovery (`httpPort`). @internal */
export type HandedRole = 'grpc' | 'discovery';

/** The numbers of the ports the primary holds. @internal */
export interface HandedPortNumbers {
  readonly grpc: number;
  readonly discovery?: number;
}

/** Set by the primary in the spare worker's environment: it waits for `take-slot` before it listens. @internal */
export const SPARE_ENV = 'JWT_GRPC_SPARE';

/**
 * The IPC protocol between primary and workers. Keys travel over the IPC channel (a
 * private pipe between the two processes), never through the environment or argv,
 * which other processes of the same user can read. Each side routes the other's union
 * through a table keyed by `type` (./router.ts): a type without a handler does not
 * compile, and a message of a type not in the union is refused.
 */
export type PrimaryMessage =
  /**
   * The keys, the revocations held now (the primary owns the revocation store), the policy
   * when the primary has a policy loader (every worker enforces the one the primary read),
   * and the ports the primary holds for the workers' servers.
   */
  | {
      readonly type: 'jwt-grpc:start';
      readonly jwks: { keys: Jwk[] };
      readonly revocations: readonly Revocation[];
      readonly policy?: JwtPolicy;
      readonly ports: HandedPortNumbers;
    }
  /** Sent with a connection the primary accepted on `port` (./dispatcher.ts): the worker answers `adopted` with `id`, then its server for that port serves it. */
  | { readonly type: 'jwt-grpc:connection'; readonly port: HandedRole; readonly id: number }
  | { readonly type: 'jwt-grpc:shutdown'; readonly graceMs: number }
  /** To the spare: a worker died, its slot is yours: listen now. */
  | { readonly type: 'jwt-grpc:take-slot' }
  /** Reloaded keys, checked by the primary: the worker swaps them in and acknowledges `generation`. */
  | { readonly type: 'jwt-grpc:keys'; readonly generation: number; readonly jwks: { keys: Jwk[] } }
  /** A reloaded policy, checked by the primary: the worker puts it in use and acknowledges `generation`. */
  | { readonly type: 'jwt-grpc:policy'; readonly generation: number; readonly policy: JwtPolicy }
  /** The answer to `reserve-status-indexes` `id`: the first of the block; `error` when none could be reserved. */
  | { readonly type: 'jwt-grpc:status-indexes'; readonly id: number; readonly first?: number; readonly error?: string }
  /** Revocations to hold, from any source (a worker's RevokeJwt, the store): sent to every worker. */
  | { readonly type: 'jwt-grpc:revoked'; readonly revocations: readonly Revocation[] }
  /** The answer to a worker's `revoke`: durable and broadcast, or `error` (nothing was revoked). */
  | { readonly type: 'jwt-grpc:revoke-done'; readonly id: number; readonly error?: string }
  | MetricsRequestMessage;

/**
 * `hello` asks for the keys: a message sent before the worker's module graph has loaded
 * and attached its listener would be dropped, so the worker speaks first.
 */
export type WorkerMessage =
  | { readonly type: 'jwt-grpc:hello' }
  /** The spare has its server, keys in place, and waits for `take-slot` without listening. */
  | { readonly type: 'jwt-grpc:spare-ready' }
  /** Its server takes connections: from now on the primary hands it some (the ports are the primary's, bound before the fork). */
  | { readonly type: 'jwt-grpc:listening' }
  /** The address cannot be bound (taken, not local): no respawn can fix that, so the cluster stops. */
  | { readonly type: 'jwt-grpc:cannot-listen'; readonly message: string }
  /** Connection `id` of `port` reached this worker, which has read nothing from it yet: the primary's copy may close. */
  | { readonly type: 'jwt-grpc:adopted'; readonly port: HandedRole; readonly id: number }
  | { readonly type: 'jwt-grpc:keys-applied'; readonly generation: number; readonly error?: string }
  | { readonly type: 'jwt-grpc:policy-applied'; readonly generation: number; readonly error?: string }
  /** A block of `count` status list indexes: the primary hands out blocks so that no two workers share an index. */
  | { readonly type: 'jwt-grpc:reserve-status-indexes'; readonly id: number; readonly count: number }
  /** A RevokeJwt this worker serves: the primary stores it, broadcasts it, then answers `revoke-done`. */
  | { readonly type: 'jwt-grpc:revoke'; readonly id: number; readonly revocation: Revocation }
  | MetricsAnswerMessage;

/** The member of {@link PrimaryMessage} tagged `T`. @internal */
export type PrimaryMessageOf<T extends PrimaryMessage['type']> = Extract<PrimaryMessage, { readonly type: T }>;

/** The member of {@link WorkerMessage} tagged `T`. @internal */
export type WorkerMessageOf<T extends WorkerMessage['type']> = Extract<WorkerMessage, { readonly type: T }>;
