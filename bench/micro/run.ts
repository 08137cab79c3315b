import { relativeToBest } from '../common/ratio.js';
import type { BenchAlgorithm } from '../options/algorithms.js';
import type { MicroProfile } from '../options/profiles.js';
import { measureAllocations } from './allocation-runner.js';
import type { MicroResults, MicroRow } from './results.js';
import { prepareTasks, taskKey } from './tasks.js';
import { timeTasks } from './timing.js';

/**
 * The micro benchmark: times every (algorithm, operation, library) in this process,
 * then measures heap bytes per operation in a child process (see allocation.ts).
 */
export async function runMicro(
  algorithms: readonly BenchAlgorithm[],
  profile: MicroProfile,
  log: (line: string) => void,
): Promise<MicroResults> {
  const { tasks, unsupported } = await prepareTasks(algorithms);
  let done = 0;
  const timings = await timeTasks(tasks, profile, (task) => {
    done += 1;
    log(`[micro ${done}/${tasks.length}] ${task.algorithm} ${task.operation} ${task.library}`);
  });
  log(`[micro] heap bytes per operation (child process, ${profile.allocationOps} ops per batch)`);
  const allocation = await measureAllocations(algorithms, profile.allocationOps);
  const notes = allocation.ok ? [] : [allocation.reason];
  notes.push(...unsupported.map((u) => `${u.library} does not support ${u.algorithm}: no rows`));

  const rows: MicroRow[] = [];
  for (const task of tasks) {
    const timing = timings.get(taskKey(task));
    if (timing === undefined) continue;
    rows.push({
      algorithm: task.algorithm,
      operation: task.operation,
      library: task.library,
      ...timing,
      timesFastest: Number.NaN,
      heapBytesPerOp: allocation.ok ? (allocation.bytesPerOp.get(taskKey(task)) ?? null) : null,
    });
  }
  return { settings: profile, rows: withTimesFastest(rows), unsupported, notes };
}

/** Fills `timesFastest` within each (algorithm, operation) group. */
function withTimesFastest(rows: readonly MicroRow[]): MicroRow[] {
  const groups = new Map<string, MicroRow[]>();
  for (const row of rows) {
    const key = `${row.algorithm}/${row.operation}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const out: MicroRow[] = [];
  for (const group of groups.values()) {
    const relative = relativeToBest(
      group.map((r) => r.meanUs),
      false,
    );
    group.forEach((row, i) => out.push({ ...row, timesFastest: relative[i] ?? Number.NaN }));
  }
  return out;
}
