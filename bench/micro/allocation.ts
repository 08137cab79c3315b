import { GCProfiler, getHeapStatistics } from 'node:v8';
import type { OperationFn } from './adapters/types.js';

/**
 * V8 heap bytes allocated per operation.
 *
 * Node 24 exposes no allocation counter (v8.getHeapStatistics() has no
 * total_allocated_bytes), so this measures the growth of the used heap across a batch
 * during which no garbage collection runs:
 * - the process is started with --expose-gc and a young generation larger than any
 *   batch (--min/--max-semi-space-size=64 MB), so that allocation alone does not
 *   trigger a scavenge;
 * - gc() empties the young generation, used_heap_size is read, the batch runs (each
 *   call awaited in turn), used_heap_size is read again;
 * - v8.GCProfiler records every collection in between: if one ran (freed memory would
 *   hide allocations), the batch is retried smaller; after 4 tries the figure is null;
 * - the same batch of an empty function is measured the same way and subtracted, which
 *   removes the loop's and the readings' own allocations.
 * Counted: every JS heap object, including short-lived garbage. Not counted: memory
 * outside the V8 heap (OpenSSL, Buffer contents from Node's pool, WebCrypto's thread pool).
 */
export async function heapBytesPerOperation(fn: OperationFn, operations: number, gc: () => void): Promise<number | null> {
  for (let attempt = 0, ops = operations; attempt < 4 && ops >= 1; attempt++, ops = Math.floor(ops / 2)) {
    const measured = await batchGrowth(fn, ops, gc);
    const baseline = await batchGrowth(emptyOperation, ops, gc);
    if (measured !== null && baseline !== null) return Math.max(0, (measured - baseline) / ops);
  }
  return null;
}

const emptyOperation: OperationFn = () => undefined;

/** Used-heap growth over `ops` calls, or null if a GC ran meanwhile. */
async function batchGrowth(fn: OperationFn, ops: number, gc: () => void): Promise<number | null> {
  gc();
  gc();
  const profiler = new GCProfiler();
  profiler.start();
  const before = getHeapStatistics().used_heap_size;
  for (let i = 0; i < ops; i++) {
    const result = fn();
    if (result instanceof Promise) await result;
  }
  const after = getHeapStatistics().used_heap_size;
  const collections = profiler.stop().statistics.length;
  return collections === 0 ? after - before : null;
}
