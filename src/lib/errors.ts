/**
 * `jwt-grpc/errors`: {@link JwtGrpcError}, the error every entry point throws, with a
 * stable {@link JwtGrpcErrorCode} to branch on (as `jose/errors` holds jose's).
 *
 * Apart from the rest so that catching an error loads nothing else.
 *
 * @example
 * ```ts
 * import { JwtGrpcError } from 'jwt-grpc/errors';
 *
 * function explain(err: unknown): string {
 *   return err instanceof JwtGrpcError ? `${err.code}: ${err.message}` : String(err);
 * }
 * ```
 * @packageDocumentation
 * @module jwt-grpc/errors
 */
export { JwtGrpcError, type JwtGrpcErrorCode } from '../base/errors.js';
