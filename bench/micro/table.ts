import { formatInteger, formatUs } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import { CONTENDED_SHARE } from '../harness/contention.js';
import type { MicroResults } from './results.js';

/** The micro table: one row per (algorithm, operation, library), libraries in a fixed order (ours first). */
export function microTable(results: MicroResults): string {
  const header = ['algorithm', 'operation', 'library', 'ops/s', 'mean µs', 'p99 µs', 'vs fastest', 'heap B/op'];
  const rows = results.rows.map((r) => [
    r.algorithm,
    r.operation,
    r.library === 'jwt-grpc' ? `**${r.library}**` : r.library,
    formatInteger(r.opsPerSecond) + (r.foreignCpuShare > CONTENDED_SHARE ? ' ⊘' : ''),
    formatUs(r.meanUs),
    formatUs(r.p99Us),
    r.timesFastest === 1 ? 'fastest' : `${r.timesFastest.toFixed(2)}x slower`,
    r.heapBytesPerOp === null ? 'n/a' : formatInteger(r.heapBytesPerOp),
  ]);
  return markdownTable(header, rows, 3);
}
