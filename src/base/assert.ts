/**
 * The one way src/ states an invariant of its own: a condition that holds unless jwt-grpc
 * has a bug, never one that bad input or a bad option can break (those are refused with a
 * {@link JwtGrpcError} of their own code, naming the problem). A broken invariant is still
 * a `JwtGrpcError`, code `ERR_INTERNAL`, so nothing but that class crosses the API; the house
 * test test/house/errors.test.ts holds src/ to it.
 */
import { JwtGrpcError } from './errors.js';

/**
 * The error of a broken invariant, for `throw internalError(...)` where the message is built
 * only on failure (a hot path must not format a message it will not throw).
 *
 * @example
 * ```ts
 * if (reason === undefined) throw internalError(`unknown reason ${String(reason)}`);
 * ```
 */
export function internalError(message: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INTERNAL', `internal error (a bug in jwt-grpc): ${message}`);
}

/**
 * Throws `ERR_INTERNAL` when `condition` is falsy; narrows it otherwise. `message` is a
 * constant: one built with a template belongs in `throw internalError(...)` behind an `if`.
 *
 * @example
 * ```ts
 * assert(session !== undefined, 'no free PKCS#11 session');
 * ```
 */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw internalError(message);
}
