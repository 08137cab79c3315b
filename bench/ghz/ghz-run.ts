import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { type CorePlan, pinnedCommand } from './cores.js';
import { type GhzCall, ghzArgs } from './ghz-args.js';
import type { GhzJsonReport } from './ghz-report.js';
import { cpuSeconds } from './proc.js';

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
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: string): void => void (output = (output + chunk).slice(-4000));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const startedAt = Date.now();
  const samples: { t: number; cpu: number }[] = [];
  const sampler = setInterval(() => {
    const cpu = child.pid === undefined ? null : cpuSeconds(child.pid);
    if (cpu !== null) samples.push({ t: Date.now() - startedAt, cpu });
  }, SAMPLE_MS);
  const killer = setTimeout(() => child.kill('SIGKILL'), (call.durationS + 120) * 1000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  }).finally(() => {
    clearInterval(sampler);
    clearTimeout(killer);
  });
  if (code !== 0) throw new Error(`ghz exited with ${code}: ${output.trim()}`);
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
