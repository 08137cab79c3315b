import { Bench } from 'tinybench';
import { cpuSnapshot, runCpu } from '../harness/contention.js';
import { allowedCpus } from '../harness/cores.js';
import type { MicroProfile } from '../options/profiles.js';
import { type MicroTask, taskKey } from './tasks.js';

/** Timing of one task. */
export interface TimingResult {
  readonly opsPerSecond: number;
  readonly meanUs: number;
  readonly p99Us: number;
  readonly samples: number;
  /** Relative margin of error of the mean, percent (tinybench's rme). */
  readonly rmePercent: number;
  /**
   * Share of the CPUs used by other processes while this task ran: timings are wall
   * time, so a task that shared its CPU with other work reads slower than it is.
   */
  readonly foreignCpuShare: number;
}

/** Busy CPU time of the machine minus this process's own (and its children's), over a task. */
function foreignShareMeter(): () => number {
  const cpus = allowedCpus();
  const before = cpuSnapshot(null);
  return () => runCpu(before, cpuSnapshot(null), cpus).foreignCpuShare;
}

/**
 * Times every task with tinybench, one after the other (no concurrency, so async tasks
 * are awaited one call at a time: latency per call, not throughput of overlapping calls).
 * ops/s is 1 / mean latency, not tinybench's mean of per-sample rates, which is biased
 * upwards by the fastest samples.
 */
export async function timeTasks(
  tasks: readonly MicroTask[],
  profile: MicroProfile,
  onTask?: (task: MicroTask) => void,
): Promise<Map<string, TimingResult>> {
  const results = new Map<string, TimingResult>();
  for (const task of tasks) {
    onTask?.(task);
    const bench = new Bench({
      time: profile.timeMs,
      iterations: profile.iterations,
      warmup: profile.warmupMs > 0,
      warmupTime: profile.warmupMs,
      throws: true,
    });
    bench.add(taskKey(task), task.fn);
    const foreignShare = foreignShareMeter();
    await bench.run();
    const foreignCpuShare = foreignShare();
    const result = bench.tasks[0]?.result;
    if (result === undefined || (result.state !== 'completed' && result.state !== 'aborted-with-statistics')) {
      throw new Error(`tinybench did not complete ${taskKey(task)} (state ${result?.state ?? 'none'})`);
    }
    results.set(taskKey(task), {
      opsPerSecond: 1000 / result.latency.mean,
      meanUs: result.latency.mean * 1000,
      p99Us: result.latency.p99 * 1000,
      samples: result.latency.samplesCount,
      rmePercent: result.latency.rme,
      foreignCpuShare,
    });
  }
  return results;
}
