import { utilization } from '../ghz/ghz-run.js';
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { launch } from '../kit/launcher.js';
import { cpuSeconds } from '../kit/proc.js';

/** A finished load-generator process and how busy it was. */
export interface SampledRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall time from start to exit, s. */
  readonly wallS: number;
  /** CPU time over the middle 60 % of the expected duration / (wall x its CPUs); null for runs too short to sample. */
  readonly loadCpuUtilization: number | null;
}

const SAMPLE_MS = 200;

/**
 * Runs a load generator pinned to `cpus` (as runGhz runs ghz) and samples its CPU time
 * from /proc; killed after `durationS + 120` s.
 */
export async function runSampled(
  plan: CorePlan,
  cpus: readonly number[],
  command: string,
  args: readonly string[],
  durationS: number,
): Promise<SampledRun> {
  const pinned = pinnedCommand(plan, cpus, command, args);
  const child = launch(pinned.command, pinned.args);
  const startedAt = Date.now();
  const samples: { t: number; cpu: number }[] = [];
  const sampler = setInterval(() => {
    const cpu = cpuSeconds(child.pid);
    if (cpu !== null) samples.push({ t: Date.now() - startedAt, cpu });
  }, SAMPLE_MS);
  const killer = setTimeout(() => child.kill(), (durationS + 120) * 1000);
  const exit = await child.closed.finally(() => {
    clearInterval(sampler);
    clearTimeout(killer);
  });
  return {
    code: exit.code,
    stdout: child.stdout,
    stderr: child.stderr,
    wallS: (Date.now() - startedAt) / 1000,
    loadCpuUtilization: utilization(samples, durationS * 1000, Math.max(1, cpus.length)),
  };
}
