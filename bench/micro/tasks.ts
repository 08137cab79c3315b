import type { BenchAlgorithm } from '../options/algorithms.js';
import { LIBRARIES } from './adapters/index.js';
import { OPERATIONS, type Operation, type OperationFn } from './adapters/types.js';
import { ClaimsSource } from './claims.js';
import { createMicroKeys } from './keys.js';

/** One measured row: a library doing one operation with one algorithm. */
export interface MicroTask {
  readonly algorithm: BenchAlgorithm;
  readonly operation: Operation;
  readonly library: string;
  readonly fn: OperationFn;
}

/** Library and algorithm pairs left out because the library lacks the algorithm. */
export interface Unsupported {
  readonly library: string;
  readonly algorithm: BenchAlgorithm;
}

/**
 * Prepares every (algorithm, operation, library) task with shared keys and claims, and
 * runs each once before returning it: a task that throws or verifies the wrong subject
 * must stop the run, not be timed.
 */
export async function prepareTasks(algorithms: readonly BenchAlgorithm[]): Promise<{ tasks: MicroTask[]; unsupported: Unsupported[] }> {
  const keys = await createMicroKeys(algorithms);
  const claims = new ClaimsSource();
  const tasks: MicroTask[] = [];
  const unsupported: Unsupported[] = [];
  for (const algorithm of algorithms) {
    const key = keys.byAlgorithm.get(algorithm);
    if (key === undefined) throw new Error(`no ${algorithm} key was generated`);
    for (const library of LIBRARIES) {
      if (!library.supports(algorithm)) {
        unsupported.push({ library: library.name, algorithm });
        continue;
      }
      const prepared = await library.prepare({ keys, key, claims });
      for (const operation of OPERATIONS) {
        const fn = prepared[operation];
        if (fn === undefined) continue;
        try {
          await fn();
        } catch (error) {
          throw new Error(`micro ${library.name} ${algorithm} ${operation} fails before timing: ${(error as Error).message}`);
        }
        tasks.push({ algorithm, operation, library: library.name, fn });
      }
    }
  }
  return { tasks, unsupported };
}

/** The row key of a task, shared by timing and allocation results. */
export function taskKey(task: { algorithm: string; operation: string; library: string }): string {
  return `${task.algorithm}/${task.operation}/${task.library}`;
}
