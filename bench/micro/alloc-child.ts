/**
 * Child process of the micro benchmark that measures heap bytes per operation (see
 * allocation.ts for the method). It needs node flags the timing process must not have
 * (--expose-gc, a 64 MB young generation), hence a process of its own, started by
 * micro/allocation-runner.ts. Input: one JSON line on stdin ({algorithms, operations});
 * output: one JSON object on stdout mapping task keys to bytes per operation (or null).
 */
import { text } from 'node:stream/consumers';
import { isBenchAlgorithm } from '../options/algorithms.js';
import { heapBytesPerOperation } from './allocation.js';
import { prepareTasks, taskKey } from './tasks.js';

interface ChildInput {
  algorithms: string[];
  operations: number;
}

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('alloc-child must run with --expose-gc');
  const input = JSON.parse(await text(process.stdin)) as ChildInput;
  const algorithms = input.algorithms.filter(isBenchAlgorithm);
  const { tasks } = await prepareTasks(algorithms);
  const results: Record<string, number | null> = {};
  for (const task of tasks) {
    // Warm the code paths first: the first calls allocate feedback vectors and compiled code.
    for (let i = 0; i < Math.min(200, input.operations); i++) await task.fn();
    results[taskKey(task)] = await heapBytesPerOperation(task.fn, input.operations, gc);
  }
  process.stdout.write(JSON.stringify(results) + '\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`alloc-child: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
