/**
 * Every default of the consumer side, in one place: the client of JwtService, the call
 * credentials that attach its tokens, the remote verifier and the server interceptor.
 */

/** {@link createJwtClient}: how long a call may take unless the call says otherwise. */
export const CLIENT_DEFAULTS = {
  deadlineMs: 10_000,
} as const;

/**
 * {@link jwtCallCredentials}: a token is replaced this long before its `exp` (or at half
 * its lifetime, whichever comes later), so a call never leaves with a token about to
 * expire; a failed refresh is retried no sooner than `retryMs` later.
 */
export const CALL_CREDENTIALS_DEFAULTS = {
  refreshBeforeSeconds: 60,
  retryMs: 1_000,
} as const;

/**
 * {@link onBehalfOf}: one exchanged token is kept per caller token until near its expiry. A
 * thousand distinct callers within a token's lifetime (minutes) is a busy service; past
 * that, the oldest is exchanged again when its caller returns (one call to the issuer, no
 * failure), and the cache stays within about 2 MB (a caller token and its exchange, ~1 KiB each).
 */
export const ON_BEHALF_OF_DEFAULTS = {
  maxEntries: 1_000,
} as const;

/**
 * {@link createRemoteVerifier}. `cooldownMs` and `maxAgeMs` are jose's createRemoteJWKSet
 * defaults (30 s, 10 min). Its clock tolerance is every verifier's,
 * CLOCK_TOLERANCE_SECONDS (src/options/table.ts), which says why.
 */
export const REMOTE_VERIFIER_DEFAULTS = {
  cooldownMs: 30_000,
  maxAgeMs: 600_000,
  /**
   * While the issuer cannot be reached, the last good JWK Set and status list answer until
   * this long after they were fetched (HTTP's stale-if-error, RFC 5861 section 4, bounded the
   * same way): a day, the longest `ttl` a status list is trusted for (STATUS_LIST_CHECK_DEFAULTS.maxTtlSeconds),
   * so an outage through a night is held, while a key the issuer withdrew, or a token it
   * revoked, stops passing a cut-off verifier within a day.
   */
  maxStaleMs: 86_400_000,
  /** Before any set was fetched, a failed fetch is retried no sooner than this (the cooldown, if shorter). */
  retryWithoutKeysMs: 1_000,
} as const;

/**
 * gRPC health checking's methods (grpc.health.v1), public by default in
 * {@link jwtAuthInterceptor}: load balancers and orchestrators call them without
 * credentials. `publicMethods` replaces the default, so name these when you add others.
 *
 * @example
 * ```ts
 * // hidden: declare const verifier: RemoteVerifier;
 * const auth = jwtAuthInterceptor(verifier, { publicMethods: [...HEALTH_METHODS, '/payments.Payments/Status'] });
 * ```
 */
export const HEALTH_METHODS: readonly string[] = Object.freeze(['/grpc.health.v1.Health/Check', '/grpc.health.v1.Health/Watch']);

/** {@link jwtAuthInterceptor}: where the token travels, and which methods need none. */
export const AUTH_INTERCEPTOR_DEFAULTS = {
  metadataKey: 'authorization',
  publicMethods: HEALTH_METHODS,
} as const;
