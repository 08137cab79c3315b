import { readFile } from 'node:fs/promises';
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { launch } from '../kit/launcher.js';
import { type GhzCall, ghzArgs } from './ghz-args.js';
import type { GhzJsonReport } from './ghz-report.js';
import { cpuSeconds } from '../kit/proc.js';

/** A finished ghz run: its report and how busy ghz itself was. */
export interface GhzRun {
  readonly report: GhzJsonReport;
  /**
   * ghz's CPU time over the middle of the run / (wall time x its CPUs): near 1 means the
   * load generator, not the server, may have set the pace. Null for runs too short to sample.
   */
  readonly loadCpuUtilization: number | null;
}

const SAMPLE_MS = 200;

/**
 * Runs ghz (pinned to `loadCpus`) and parses its JSON report. ghz's CPU time is sampled
 * from /proc while it runs; the first and last 20 % of the expected duration are left
 * out, which excludes ghz's start-up (proto parsing, dialling) and its report writing.
 */
export async function runGhz(ghz: string, call: GhzCall, plan: CorePlan, loadCpus: readonly number[]): Promise<GhzRun> {
  const { command, args } = pinnedCommand(plan, loadCpus, ghz, ghzArgs(call));
  const ghzProcess = launch(command, args);
  const startedAt = Date.now();
  const samples: { t: number; cpu: number }[] = [];
  const sampler = setInterval(() => {
    const cpu = cpuSeconds(ghzProcess.pid);
    if (cpu !== null) samples.push({ t: Date.now() - startedAt, cpu });
  }, SAMPLE_MS);
  const killer = setTimeout(() => ghzProcess.kill(), (call.durationS + 120) * 1000);
  const exit = await ghzProcess.closed.finally(() => {
    clearInterval(sampler);
    clearTimeout(killer);
  });
  if (exit.code !== 0) {
    throw new Error(`ghz exited with ${exit.code ?? exit.signal}: ${`${ghzProcess.stdout}${ghzProcess.stderr}`.trim().slice(-4000)}`);
  }
  const report = JSON.parse(await readFile(call.output, 'utf8')) as GhzJsonReport;
  return { report, loadCpuUtilization: utilization(samples, call.durationS * 1000, call.cpus) };
}

/** CPU busy fraction between the samples that fall in the middle 60 % of the run. */
export function utilization(samples: readonly { t: number; cpu: number }[], durationMs: number, cpus: number): number | null {
  const inside = samples.filter((s) => s.t >= durationMs * 0.2 && s.t <= durationMs * 0.8);
  const first = inside[0];
  const last = inside.at(-1);
  if (first === undefined || last === undefined || last.t - first.t < 2 * SAMPLE_MS) return null;
  return (last.cpu - first.cpu) / (((last.t - first.t) / 1000) * cpus);
}
