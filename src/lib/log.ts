/**
 * `jwt-grpc/log`: the {@link Logger} the server, the cluster, the key loader and the
 * remote verifier take: a stderr logger ({@link createStderrLogger}) or none
 * ({@link silentLogger}). Any object with `info`, `warn` and `error` will do (pino's,
 * winston's).
 *
 * Apart from the rest because every side takes one, and none should load another for it.
 *
 * @example
 * ```ts
 * import { createStderrLogger } from 'jwt-grpc/log';
 *
 * const logger = createStderrLogger({ format: 'json', level: 'warn' });
 * ```
 * @packageDocumentation
 * @module jwt-grpc/log
 */
export { type LogFormat, type LogLevel, type Logger, type StderrLoggerOptions, createStderrLogger, silentLogger } from '../base/log.js';
