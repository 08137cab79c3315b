import { optionValue } from '../options/resolve.js';
import { OPTIONS } from '../options/table.js';

/**
 * Reads the worker count from `NODEMAXPROCS` (Go's GOMAXPROCS, for Node): unset, empty
 * or `1` = one process; `N` > 1 = a cluster of N workers (at most 1024); `max` = one per
 * available core. Anything else throws `JwtGrpcError` (`ERR_INVALID_OPTION`, field
 * `NODEMAXPROCS`).
 *
 * @example
 * ```ts
 * const workers = parseNodeMaxProcs(process.env.NODEMAXPROCS); // "3" -> 3, "max" -> 16 on 16 cores
 * ```
 */
export function parseNodeMaxProcs(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return optionValue('workers', undefined);
  return OPTIONS.workers.kind.parse(value, 'NODEMAXPROCS');
}
