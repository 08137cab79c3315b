/**
 * What a revoked token is and what a store of them does: the contract the file, Redis and
 * status-list stores keep, and that a store of the caller's own (option `revocationStore`)
 * keeps too. It sits below the option table, which checks such a store at start.
 */

/** One revoked token. */
export interface Revocation {
  /** The token's `jti`. */
  readonly jti: string;
  /** When the entry may go, in Unix seconds: the token's `exp` plus the clock tolerance. */
  readonly expiresAt: number;
  /** Free text from RevokeJwt, for the audit line; never a token. */
  readonly reason?: string;
  /**
   * The token's position in the status lists, when it had one: `(N - 1) * 2^20 + idx` for
   * entry `idx` (`status.status_list.idx`) of list N (`ISSUER/statuslists/N`), so `idx` in list 1.
   */
  readonly statusIndex?: number;
}

/**
 * Where revocations outlive the process: a file (one machine) or Redis (many). The
 * in-memory set answers VerifyJwt; a store feeds it. In cluster mode the PRIMARY owns the
 * store: workers send RevokeJwt to it over IPC and it broadcasts every revocation, from
 * whatever source, to every worker.
 */
export interface RevocationStore {
  /** Human name for logs and metrics: 'file' | 'redis'. */
  readonly kind: string;
  /**
   * Loads what is stored and calls `onRevoked` with it, then keeps calling it with
   * revocations that arrive from elsewhere (another replica via Pub/Sub, a resync). Resolves
   * once the first load is done; rejects (JwtGrpcError) when the store cannot be reached at
   * start.
   */
  start(onRevoked: (revocations: readonly Revocation[]) => void): Promise<void>;
  /**
   * Makes one revocation durable before it resolves (file: appended and fsync'd; Redis: SET
   * with EX then PUBLISH). Rejects with JwtGrpcError code 'ERR_REVOCATION_STORE_UNAVAILABLE'
   * when it cannot, having stored nothing that a later start would read as revoked.
   */
  add(revocation: Revocation): Promise<void>;
  /** Whether the store is reachable and the in-memory copy current (metric jwt_grpc_revocation_store_up). */
  readonly up: boolean;
  /** Allocates `count` consecutive status-list indexes and returns the first (Redis: INCRBY). Absent: the caller allocates locally. */
  reserveStatusIndexes?(count: number): Promise<number>;
  /** Stops timers and connections; idempotent. */
  close(): Promise<void>;
}
