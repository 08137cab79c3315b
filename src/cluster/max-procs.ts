import { availableParallelism } from 'node:os';
import { invalidOption } from '../errors.js';

/** Most workers accepted: far above any core count we expect, low enough to catch typos. */
const MAX_WORKERS = 1024;

/**
 * Reads the worker count from `NODEMAXPROCS` (Go's GOMAXPROCS, for Node): unset, empty
 * or `1` = one process; `N` > 1 = a cluster of N workers; `max` = one per available core.
 * Anything else throws `JwtGrpcError` (`ERR_INVALID_OPTION`, field `NODEMAXPROCS`).
 *
 * @example
 * ```ts
 * const workers = parseNodeMaxProcs(process.env.NODEMAXPROCS); // "3" -> 3, "max" -> 16 on 16 cores
 * ```
 */
export function parseNodeMaxProcs(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 1;
  const text = value.trim();
  if (text === 'max') return availableParallelism();
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_WORKERS) {
    throw invalidOption('NODEMAXPROCS', `must be an integer from 1 to ${MAX_WORKERS} or "max", got ${JSON.stringify(value)}`);
  }
  return Number(text);
}
