/**
 * NODEMAXPROCS beyond what the machine holds: refused before any fork when the workers
 * cannot fit in memory even idle, warned about above the core count and above the free
 * memory their peak needs. Never a silent start in which no worker serves.
 */
import { totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../bench/kit/cli.js';
import { WORKER_PEAK_RSS_BYTES, WORKER_START_RSS_BYTES, checkWorkersFit } from '../../src/cluster/fit.js';
import { JwtGrpcError } from '../../src/base/errors.js';

const GIB = 1024 ** 3;
/** The machine of the issue: 2 cores, 24 GiB, 20 free. */
const SMALL = { cores: 2, totalBytes: 24 * GIB, freeBytes: 20 * GIB };

function warnings(workers: number, machine = SMALL): string[] {
  const lines: string[] = [];
  checkWorkersFit(workers, { warn: (line: string) => void lines.push(line) }, machine);
  return lines;
}

describe('checkWorkersFit', () => {
  it('states its per-worker assumptions: 80 MiB idle, 150 MiB at peak', () => {
    expect([WORKER_START_RSS_BYTES, WORKER_PEAK_RSS_BYTES]).toEqual([80 * 1024 ** 2, 150 * 1024 ** 2]);
  });

  it('refuses 1000 workers on 24 GiB, naming NODEMAXPROCS and how many fit', () => {
    let err: unknown;
    try {
      warnings(1000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect((err as JwtGrpcError).code).toBe('ERR_INVALID_OPTION');
    expect((err as JwtGrpcError).message).toBe(
      'option workers (NODEMAXPROCS): 1000 workers need about 78.1 GiB at start (80 MiB each, measured idle), ' +
        "more than this machine's 24.0 GiB: at most 307 fit; NODEMAXPROCS=max gives one per core (2)",
    );
  });

  it('warns above the core count, and above the free memory the peak needs', () => {
    expect(warnings(2)).toEqual([]);
    expect(warnings(4)).toEqual([
      'NODEMAXPROCS=4 is more than the 2 cores: the workers beyond one per core only compete for CPU; NODEMAXPROCS=max gives one per core',
    ]);
    expect(warnings(200)[1]).toBe(
      'NODEMAXPROCS=200: under load the workers may need 29.3 GiB (150 MiB each at peak), more than the 20.0 GiB free now',
    );
  });

  it('says nothing for one process', () => {
    expect(warnings(1, { cores: 1, totalBytes: 1, freeBytes: 1 })).toEqual([]);
  });
});

describe('jwt-grpc serve with too many workers for the memory', () => {
  const workers = Math.floor(totalmem() / WORKER_START_RSS_BYTES) + 1;
  // NODEMAXPROCS's own bound (1024) refuses more first: on a machine that fits 1024 workers this cannot be shown.
  it.runIf(workers <= 1024)('exits 2 before forking, with one line', async () => {
    const run = await runCli(['serve', '--port', '0'], { env: { NODEMAXPROCS: String(workers) } });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`jwt-grpc: option workers (NODEMAXPROCS): ${workers} workers need about`);
  });
});
