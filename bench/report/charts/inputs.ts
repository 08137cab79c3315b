/**
 * What the charts read from a results.json: the macro section this harness always writes,
 * and the sections other parts of the benchmark add (h2load, the open-loop latency sweep,
 * the warm-up sweep, start-up), each optional. A section that is absent, or whose entries
 * lack a figure a chart needs, gives no chart rather than an error: results.json files of
 * older runs stay chartable.
 */
import type { BenchResults } from '../results-file.js';

/** A median with its 95 % interval; the bounds are null when the rounds were too few. */
export interface IntervalFigure {
  readonly median: number;
  readonly low: number | null;
  readonly high: number | null;
}

/** One (server, algorithm) of the h2load saturated cell. */
export interface H2loadEntry {
  readonly server: string;
  readonly algorithm: string;
  readonly rps: IntervalFigure;
  readonly cpuPerCallUs?: number | null;
  readonly saturated?: boolean;
  /** ghz's requests/s for the same server and algorithm, where the run has it. */
  readonly ghzRps?: number | null;
  /** ours / Go in requests/s under h2load, per round, as a median with its interval. */
  readonly ratioToGo?: IntervalFigure | null;
}

/** One point of the open-loop sweep: a fixed offered rate against one server. */
export interface OpenLoopPoint {
  readonly server: string;
  readonly algorithm: string;
  readonly offeredRps: number;
  readonly fractionOfOwnCapacity?: number;
  readonly fractionOfGoCapacity?: number;
  readonly p50Ms: IntervalFigure;
  readonly p99Ms: IntervalFigure;
  readonly p999Ms: IntervalFigure;
  readonly achievedRps: number;
  readonly errors: number;
}

/** One point of the warm-up sweep: a server measured after `warmupCalls` calls. */
export interface WarmupPoint {
  readonly server: string;
  readonly algorithm: string;
  readonly warmupCalls: number;
  readonly ratioToGo?: IntervalFigure;
  readonly cpuPerCallUs: number;
}

/** Time from process start to the first OK call, per server. */
export interface StartupEntry {
  readonly server: string;
  readonly timeToFirstOkMs: IntervalFigure;
}

/** results.json as the charts read it: every section beyond the harness's own is optional. */
export type ChartedResults = BenchResults & {
  readonly h2load?: readonly H2loadEntry[] | null;
  readonly openLoop?: readonly OpenLoopPoint[] | null;
  readonly warmup?: readonly WarmupPoint[] | null;
  readonly startup?: readonly StartupEntry[] | null;
};

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A figure with a finite median; bounds that are missing or not finite read as null. */
export function intervalOf(value: unknown): IntervalFigure | null {
  if (value === null || typeof value !== 'object') return null;
  const { median, low, high } = value as Record<string, unknown>;
  if (!isNumber(median)) return null;
  return { median, low: isNumber(low) ? low : null, high: isNumber(high) ? high : null };
}

/** The entries of an optional section that are objects, or [] when the section is absent. */
export function entriesOf(section: unknown): Record<string, unknown>[] {
  if (!Array.isArray(section)) return [];
  return section.filter((entry): entry is Record<string, unknown> => entry !== null && typeof entry === 'object');
}

export { isNumber };
