/**
 * A measuring instrument preloaded into the server of a load cell
 * (`node --expose-gc --import dist/bench/soak/gc-preload.js ...`), never part of the
 * package: on SIGUSR2 it runs a full garbage collection and writes one line to stderr,
 * {@link GC_DONE_LINE} followed by a JSON {@link GcReport}.
 *
 * Why: between two mark-compacts V8's heap holds every short-lived object of the calls
 * since the last one, so a VmRSS reading taken when the load stops lands anywhere on
 * that saw-tooth (measured: 130 to 180 MiB for the same server and load), and it stays
 * there while the server idles. After a full collection VmRSS is what the server keeps.
 *
 * One part of it is still no leak: V8's young generation. Node 24's V8 grows the new
 * space (two semi-spaces) up to 2 x 64 MiB while calls allocate fast, and a full GC
 * empties it without giving its pages back (measured after 8 s of 1x1000 load: new
 * space 128 MiB committed, 120 MiB resident, 0 used; old space 9 MiB). How far it has
 * grown depends on how many calls the warm-up managed, which on a shared machine
 * varies, so the report carries the new space's resident size for the check to use.
 */
import { getHeapSpaceStatistics } from 'node:v8';

export const GC_DONE_LINE = 'jwt-grpc-soak: full gc done';

/** What the probe reports, in bytes. */
export interface GcReport {
  readonly before: { readonly rss: number; readonly heapTotal: number; readonly heapUsed: number; readonly external: number };
  readonly after: { readonly rss: number; readonly heapTotal: number; readonly heapUsed: number; readonly external: number };
  /** Resident bytes of V8's new space after the GC (it is empty then). */
  readonly newSpaceResident: number;
  readonly oldSpaceUsed: number;
}

function memory(): GcReport['before'] {
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
  return { rss, heapTotal, heapUsed, external };
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc !== undefined) {
  process.on('SIGUSR2', () => {
    const before = memory();
    // Twice: finalizers run by the first collection (native objects of node:http2
    // streams) release memory that the second one can then reclaim.
    gc();
    gc();
    const spaces = getHeapSpaceStatistics();
    const report: GcReport = {
      before,
      after: memory(),
      newSpaceResident: spaces.find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0,
      oldSpaceUsed: spaces.find((s) => s.space_name === 'old_space')?.space_used_size ?? 0,
    };
    process.stderr.write(`${GC_DONE_LINE} ${JSON.stringify(report)}\n`);
  });
}
