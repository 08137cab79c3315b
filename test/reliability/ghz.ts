import { join } from 'node:path';
import { allowedCpus, planCores } from '../../bench/ghz/cores.js';
import type { GhzJsonReport } from '../../bench/ghz/ghz-report.js';
import { runGhz } from '../../bench/ghz/ghz-run.js';
import { LOAD_REQUEST } from '../../bench/soak/load-cell.js';

/**
 * One call of ghz's per-call details. `timestamp` is when the call **ended**: ghz's stats
 * handler reports `stats.End.EndTime` (runner/stats_handler.go, v0.120.0); `latency` is
 * in nanoseconds.
 */
export interface GhzDetail {
  readonly timestamp: string;
  readonly latency: number;
  readonly error: string;
  readonly status: string;
}

export type GhzReportWithDetails = Omit<GhzJsonReport, 'details'> & { readonly details?: readonly GhzDetail[] | null };

/**
 * ghz with GenerateJwt HS256 for the fault tests: not pinned (the cluster's workers and
 * ghz share the machine's CPUs), `--duration-stop=wait`, through the harness' runGhz.
 */
export async function ghzLoad(options: {
  ghz: string;
  port: number;
  connections: number;
  concurrency: number;
  durationS: number;
  workDir: string;
  name: string;
}): Promise<GhzReportWithDetails> {
  const cpus = allowedCpus();
  const plan = planCores(null, cpus, false);
  const run = await runGhz(
    options.ghz,
    {
      method: 'GenerateJwt',
      data: LOAD_REQUEST,
      connections: options.connections,
      concurrency: options.concurrency,
      durationS: options.durationS,
      cpus: cpus.length,
      port: options.port,
      output: join(options.workDir, `${options.name}.json`),
      name: options.name,
    },
    plan,
    cpus,
  );
  return run.report as unknown as GhzReportWithDetails;
}

/** Wall-clock ms of a ghz detail's end (its RFC 3339 timestamp with nanoseconds). */
export function detailEndMs(detail: GhzDetail): number {
  return Date.parse(detail.timestamp.replace(/(\.\d{3})\d*/, '$1'));
}

/** Wall-clock ms of a ghz detail's start: its end less its latency. */
export function detailStartMs(detail: GhzDetail): number {
  return detailEndMs(detail) - detail.latency / 1e6;
}

/** Non-OK responses by error message. */
export function errorsOf(report: GhzReportWithDetails): Record<string, number> {
  return { ...(report.errorDistribution ?? {}) };
}

export function okCount(report: GhzReportWithDetails): number {
  return report.statusCodeDistribution?.['OK'] ?? 0;
}
