import type { MachineInfo, Versions } from '../common/machine.js';
import type { LoadResults } from '../load/results.js';
import type { MacroResults } from '../macro/results.js';
import type { MicroResults } from '../micro/results.js';
import type { BenchOptions } from '../options/types.js';

/**
 * The content of results.json: every figure of a run, each round included.
 * Schema 2: cells hold `rounds` (schema 1: `repetitions`, one server start each), with
 * steal, probe and flags per round; `macro.ratios` holds every ratio per round with its
 * interval; `macro.settings.repetitions` is kept, equal to `rounds`.
 *
 * The load sections (bench/load/results.ts, added within schema 2: each field is null
 * when its section did not run, and absent in files written before it existed):
 * - `h2load`: per server and algorithm, saturated requests/s under h2load (median and
 *   95 % interval over rounds), server and generator CPU, which side saturated, the ghz
 *   figure of the same server processes and rounds, and per algorithm the ratios ours / Go;
 * - `openLoop`: one entry per (server, algorithm, offered rate): p50 / p99 / p99.9 from
 *   each call's intended send time, each a median over rounds with its interval, the
 *   achieved rate and the errors; each with the server's CPU µs per call and busy share; `openLoopRatios`: p99 and
 *   server CPU per call ours / Go at 25, 50 and 80 % of Go's capacity (the fixed-load curve);
 * - `warmup`: CPU per call and its ratio to Go per warm-up count on fresh servers;
 *   `startup`: time from spawn to the first OK call per server;
 * - `loadSettings`: how they ran (servers, algorithms, rates, counts) and their notes.
 */
export interface BenchResults extends LoadResults {
  readonly schema: 2;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly versions: Versions;
  readonly options: BenchOptions;
  readonly micro: MicroResults | null;
  readonly macro: MacroResults | null;
  readonly notes: readonly string[];
}

/** JSON with NaN/Infinity written as null (JSON has no NaN; a missing figure is null). */
export function serializeResults(results: BenchResults): string {
  return JSON.stringify(results, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2) + '\n';
}
