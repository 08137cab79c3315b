/**
 * Every error that crosses the public API is a {@link JwtGrpcError} whose `code`
 * says what went wrong; callers switch on `code`, never on the message.
 *
 * @example
 * ```ts
 * function exitCode(code: JwtGrpcErrorCode): number {
 *   return code === 'ERR_INVALID_OPTION' ? 2 : 1;
 * }
 * ```
 */
export type JwtGrpcErrorCode =
  /** An option given to a factory is missing, of the wrong type or out of range. */
  | 'ERR_INVALID_OPTION'
  /** A key could not be imported, generated or used (bad JWK, short HMAC secret...). */
  | 'ERR_INVALID_KEY'
  /** A key, subject, certificate or other file could not be read or parsed. */
  | 'ERR_FILE'
  /** A request to sign had a bad field (unknown algorithm, reserved claim, bad ttl...). */
  | 'ERR_INVALID_REQUEST'
  /** The server is in the wrong state for the call (already listening, closed...). */
  | 'ERR_SERVER_STATE'
  /** The server could not bind its address (in use, bad host, no permission...). */
  | 'ERR_LISTEN'
  /** A cluster could not start or keep its workers alive. */
  | 'ERR_CLUSTER'
  /** A gRPC call ended with a non-OK status (`GrpcStatusError`, which carries the status code). */
  | 'ERR_GRPC_STATUS'
  /** The installed @grpc/grpc-js cannot do what was asked (too old: no server interceptors before 1.10). */
  | 'ERR_GRPC_JS_VERSION'
  /**
   * A revocation store (the revocations file, Redis) cannot be read or written: at start,
   * or for one RevokeJwt, which then answers UNAVAILABLE having revoked nothing.
   */
  | 'ERR_REVOCATION_STORE_UNAVAILABLE'
  /**
   * A key that is a handle (an HSM's, a KMS's) could not sign: the backend is unreachable,
   * slow past `keyBackendTimeoutMs`, or its circuit breaker is open. GenerateJwt answers UNAVAILABLE.
   */
  | 'ERR_KEY_BACKEND_UNAVAILABLE'
  /**
   * A method of a jwt-grpc object was handed a value it cannot take: a metadata key or value
   * the gRPC protocol forbids, an unknown response compression, a status list index out of range.
   */
  | 'ERR_INVALID_ARGUMENT'
  /**
   * A document fetched over HTTP(S) (a JWK Set, OpenID discovery, a Status List Token) was not
   * answered or was refused: an HTTP status other than 200, too large, the wrong type, issuer or signature.
   */
  | 'ERR_FETCH'
  /**
   * An invariant of jwt-grpc itself does not hold: a bug, never bad input. Thrown only through
   * src/base/assert.ts: report it with its message.
   */
  | 'ERR_INTERNAL'
  /**
   * JwtService refuses the caller: the issuance policy does not allow it this token (or a
   * bound token without a client certificate), or it may not revoke. Answered PERMISSION_DENIED.
   */
  | 'ERR_PERMISSION_DENIED'
  /** RevokeJwt without the admin secret, or with a wrong one, or an ExchangeToken whose subject or actor token is not valid here. Answered UNAUTHENTICATED. */
  | 'ERR_UNAUTHENTICATED'
  /** A caller asked GenerateJwt for more tokens than the issuance policy's rate for it allows. Answered RESOURCE_EXHAUSTED. */
  | 'ERR_RATE_LIMITED'
  /** No Token Status List index is free for a new token (its index store is unreachable, or the most lists a server holds are live). GenerateJwt answers UNAVAILABLE. */
  | 'ERR_STATUS_LIST_FULL'
  /** GetStatusList on a server that keeps no status list. Answered FAILED_PRECONDITION. */
  | 'ERR_NO_STATUS_LIST'
  /** ExchangeToken on a server without a trust file (option trustFile). Answered FAILED_PRECONDITION. */
  | 'ERR_NO_TOKEN_EXCHANGE'
  /** GetStatusList names a list other than the server's. Answered NOT_FOUND. */
  | 'ERR_UNKNOWN_STATUS_LIST'
  /** With `verifyIssued`, a token just signed did not verify with the key set: GenerateJwt answers INTERNAL, and the server logs this. */
  | 'ERR_SELF_CHECK_FAILED';

/**
 * The one error class of jwt-grpc. `field` names the option, key or request field at
 * fault when there is one. Messages never carry key material or whole tokens. Making one
 * never throws: it is made on the way out of a failure, where a second error would hide the
 * first, so its options are typed rather than checked.
 *
 * @example
 * ```ts
 * try {
 *   createJwtServer({ defaultTtlSeconds: -1 });
 * } catch (err) {
 *   if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_OPTION') console.error(err.field);
 * }
 * ```
 */
export class JwtGrpcError extends Error {
  override readonly name = 'JwtGrpcError';
  readonly code: JwtGrpcErrorCode;
  readonly field: string | undefined;

  constructor(code: JwtGrpcErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options?.field;
  }
}

/** Shorthand for the most common case: an option that fails validation. */
export function invalidOption(field: string, message: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_OPTION', `option ${field}: ${message}`, { field });
}
