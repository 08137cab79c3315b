/**
 * Whether the workers NODEMAXPROCS asks for can run on this machine, checked in the primary
 * before it forks any: more workers than memory holds would start and then never serve (each
 * fork dies or swaps), and more workers than cores only compete for CPU. Memory is judged
 * against measured resident sizes of a worker, stated here.
 */
import { availableParallelism, freemem, totalmem } from 'node:os';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';

const MIB = 1024 * 1024;
/** Resident memory of an idle `serve` worker right after start (measured: 82 MiB, Node 24, x64). Below this, no worker starts. */
export const WORKER_START_RSS_BYTES = 80 * MIB;
/** Peak resident memory of a worker under load with the CLI's V8 flags (bench/PERFORMANCE.md: 140-155 MB). */
export const WORKER_PEAK_RSS_BYTES = 150 * MIB;

/** What the check knows of the machine; tests give their own. */
export interface Machine {
  readonly cores: number;
  readonly totalBytes: number;
  readonly freeBytes: number;
}

const thisMachine = (): Machine => ({ cores: availableParallelism(), totalBytes: totalmem(), freeBytes: freemem() });
const gib = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/**
 * Refuses a worker count whose workers cannot fit in the machine's memory even idle
 * (`ERR_INVALID_OPTION`, naming NODEMAXPROCS and how many fit); warns above the core count,
 * and when their peak under load exceeds the memory free now.
 *
 * @example
 * ```ts
 * checkWorkersFit(parseNodeMaxProcs(process.env.NODEMAXPROCS), logger);
 * ```
 */
export function checkWorkersFit(workers: number, logger: Pick<Logger, 'warn'>, machine: Machine = thisMachine()): void {
  if (workers <= 1) return;
  const fit = Math.floor(machine.totalBytes / WORKER_START_RSS_BYTES);
  if (workers > fit) {
    throw new JwtGrpcError(
      'ERR_INVALID_OPTION',
      `option workers (NODEMAXPROCS): ${workers} workers need about ${gib(workers * WORKER_START_RSS_BYTES)} at start ` +
        `(${WORKER_START_RSS_BYTES / MIB} MiB each, measured idle), more than this machine's ${gib(machine.totalBytes)}: ` +
        `at most ${fit} fit; NODEMAXPROCS=max gives one per core (${machine.cores})`,
      { field: 'workers' },
    );
  }
  if (workers > machine.cores) {
    logger.warn(
      `NODEMAXPROCS=${workers} is more than the ${machine.cores} cores: the workers beyond one per core only compete for CPU; NODEMAXPROCS=max gives one per core`,
    );
  }
  if (workers * WORKER_PEAK_RSS_BYTES > machine.freeBytes) {
    logger.warn(
      `NODEMAXPROCS=${workers}: under load the workers may need ${gib(workers * WORKER_PEAK_RSS_BYTES)} ` +
        `(${WORKER_PEAK_RSS_BYTES / MIB} MiB each at peak), more than the ${gib(machine.freeBytes)} free now`,
    );
  }
}
