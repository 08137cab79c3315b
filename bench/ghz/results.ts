import type { Spread } from '../common/stats.js';
import type { CorePlan } from './cores.js';
import type { GhzSummary } from './ghz-report.js';
import type { Scenario } from './scenarios.js';
import type { ServerRole } from './servers.js';

/** One measured ghz run of a cell. */
export interface RepetitionResult {
  readonly repetition: number;
  readonly ghz: GhzSummary;
  /** Server CPU seconds (user + system, whole process tree) across this run. */
  readonly serverCpuSeconds: number;
  /** Server CPU time per response (OK or not), µs. */
  readonly serverCpuUsPerRequest: number;
  /** Server CPU seconds / (run seconds x server cores): near 1 = the server was saturated. */
  readonly serverCpuUtilization: number;
  /** See GhzRun.loadCpuUtilization. */
  readonly loadCpuUtilization: number | null;
  /** ghz's CPU seconds over the whole run, start-up and report included. */
  readonly ghzCpuSeconds: number;
  /** See RunCpu.foreignCpuShare. */
  readonly foreignCpuShare: number;
  /** ghz's JSON report without per-call details, relative to the run directory. */
  readonly reportFile: string;
}

/** Median (min-max) over the repetitions of a cell. */
export interface CellAggregate {
  readonly rpsOk: Spread;
  readonly meanMs: Spread;
  readonly p50Ms: Spread;
  readonly p90Ms: Spread;
  readonly p99Ms: Spread;
  readonly serverCpuUsPerRequest: Spread;
  readonly okCount: number;
  readonly nonOkCount: number;
  readonly nonOkByStatus: Readonly<Record<string, number>>;
  readonly maxLoadCpuUtilization: number | null;
  readonly maxForeignCpuShare: number;
}

/** Why a cell's figures need a second look; shown as marks in the tables. */
export type CellFlag = 'non-ok' | 'load-bound' | 'contended' | 'server-exited' | 'failed';

/** One (server, scenario) cell. */
export interface CellResult {
  readonly server: string;
  readonly scenario: string;
  readonly repetitions: readonly RepetitionResult[];
  readonly aggregate: CellAggregate | null;
  /** Sum of VmHWM over the server's process tree, read just before stopping it. */
  readonly peakRssBytes: number | null;
  readonly htmlReport: string | null;
  readonly flags: readonly CellFlag[];
  readonly error: string | null;
}

export interface ServerStatus {
  readonly name: string;
  readonly role: ServerRole;
  readonly description: string;
  readonly cluster: boolean;
  /** Why it did not run; null when it ran. */
  readonly skipped: string | null;
}

export interface MacroResults {
  readonly settings: { readonly durationS: number; readonly warmupS: number; readonly repetitions: number; readonly html: boolean };
  readonly ghzPath: string;
  readonly corePlan: CorePlan;
  readonly scenarios: readonly Scenario[];
  readonly servers: readonly ServerStatus[];
  readonly cells: readonly CellResult[];
  readonly notes: readonly string[];
}
