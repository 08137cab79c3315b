import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatMiB } from '../common/format.js';
import { repoPath } from '../kit/paths.js';
import { sleep } from '../kit/wait.js';
import { type GhzSummary, summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { type CliServer, serveArgs, startCli } from '../kit/cli.js';
import type { CorePlan } from '../harness/cores.js';
import type { OutputMatch } from '../kit/launcher.js';
import { statusBytes } from '../kit/proc.js';
import type { Transport } from '../../src/lib/index.js';
import { GC_DONE_LINE, type GcReport } from './gc-preload.js';

/**
 * One load cell of the reliability checks: a load scenario against a fresh
 * single-process server on the transport given, pinned to its own CPU, run as rounds of
 * equal length, the server's RSS read after each.
 *
 * What must hold:
 * - zero non-OK responses in every round (no RESOURCE_EXHAUSTED, ENHANCE_YOUR_CALM,
 *   RST_STREAM, Unavailable). ghz runs with `--duration-stop=wait`, so the calls in
 *   flight when a round ends finish and count, instead of being cut as errors;
 * - RSS levels off: over the last {@link LoadCellOptions.judgedRounds} readings, the
 *   median growth from one round to the next stays under a bound (MiB per round). Growth
 *   that levels off is the allocator and V8 reaching the size this load needs; growth
 *   that goes on round after round is a leak, per call or per stream. The median, not a
 *   least-squares slope: malloc's arenas grow in steps, when a round reaches a call rate
 *   no round before it did, and one such step in the window moves a slope but not the
 *   median; a leak grows every round, which moves both.
 *
 * Why a trend and not one reading before and one after: RSS under load climbs for tens of
 * seconds before it levels off, and how long depends on how many calls the machine
 * managed. Measured with ghz, 500 connections x 1,000 in flight on the own HTTP/2, seven
 * rounds of 12 s, RSS read 3 s after each: 81, 117, 158, then 157-158 MiB for five rounds.
 * A single before/after pair taken on that climb once read +21.5 % (128.3 -> 162.6 MiB)
 * while V8's live heap fell (13.2 -> 11.7 MiB): a plateau reached late, not a leak.
 *
 * How RSS is read, and why (measured on Node 24, 2 shared cores):
 * - after a full GC in the server (gc-preload.ts): without it a reading lands anywhere
 *   on V8's saw-tooth (130 to 180 MiB for the same server and load);
 * - less the growth of V8's young generation: Node 24's V8 grows the new space up to
 *   2 x 64 MiB while calls allocate fast and keeps its pages, empty, after a GC. Each
 *   reading is VmRSS less the largest new space seen so far; a new space that shrank
 *   excuses nothing, since V8 keeps the freed pages resident in its page pool (seen: new
 *   space 127 -> 1.3 MiB with VmRSS 295 -> 306 MiB).
 * The plain VmRSS readings, before and after each GC, are reported beside the checked figure.
 */

/** A load shape: GenerateJwt calls in flight over so many connections. */
export interface LoadScenario {
  readonly name: string;
  readonly connections: number;
  readonly concurrency: number;
}

/** The two scenarios checked: 1,000 calls in flight over one connection, and over 500. */
export const LOAD_SCENARIOS: readonly LoadScenario[] = [
  { name: '1x1000', connections: 1, concurrency: 1000 },
  { name: '500x1000', connections: 500, concurrency: 1000 },
];

/** The request of every call: HS256, a fixed subject. */
export const LOAD_REQUEST = { algorithm: 'HS256', subject: 'load@example.com' } as const;

/**
 * Largest accepted median growth of RSS (after a full GC, less V8's new space) from one
 * judged round to the next, in MiB per round: what the levels of a plateau wander by,
 * with room. See test/reliability/soak.load.test.ts for the measurements it comes from.
 */
export const GROWTH_LIMIT_MIB = 2;

/** The GC probe preloaded into the server (compiled: `npm run build`). */
const GC_PRELOAD = repoPath('dist', 'bench', 'soak', 'gc-preload.js');

/** Pause before each RSS reading, so that all are taken with the server equally idle. */
const SETTLE_MS = 500;

const MIB = 1024 * 1024;

export interface RssReading {
  /** VmRSS just before the GC. */
  readonly raw: number;
  /** VmRSS after the full GC. */
  readonly afterGc: number;
  /** Resident size of V8's (empty) new space after the GC. */
  readonly newSpace: number;
  /** V8's live heap after the GC. */
  readonly heapUsed: number;
}

/** The RSS readings of a cell as a trend. */
export interface RssTrend {
  /** Per round: VmRSS after a full GC less the largest new space seen so far (bytes): what is judged. */
  readonly levels: readonly number[];
  /** Median growth from one round to the next over the last `judged` levels, in bytes per round: what is checked. */
  readonly growthPerRound: number;
  /** The same growth per call of those rounds (bytes per call), for the record. */
  readonly growthPerCall: number;
  /** Least-squares slope of the same levels (bytes per round), for the record. */
  readonly slopePerRound: number;
  /** How many of the last levels are judged. */
  readonly judged: number;
}

export interface LoadCellResult {
  readonly scenario: LoadScenario;
  readonly transport: Transport;
  /** Length of one round. */
  readonly roundS: number;
  /** Every round, in order. */
  readonly rounds: readonly GhzSummary[];
  /** RSS after each round. */
  readonly readings: readonly RssReading[];
  readonly trend: RssTrend;
  /** The bound the median growth was held to, in MiB per round. */
  readonly growthLimitMiB: number;
  /** Highest VmRSS sampled (every second) during the rounds. */
  readonly rssPeakBytes: number;
  /** The server's exit after the final SIGTERM (0 expected). */
  readonly exitCode: number | null;
  /** Why the cell fails; empty when it passes. */
  readonly failures: readonly string[];
}

export interface LoadCellOptions {
  readonly scenario: LoadScenario;
  /** The server's `--transport`. */
  readonly transport: Transport;
  readonly ghz: string;
  readonly plan: CorePlan;
  /** A private JWK Set with an HS256 key. */
  readonly keysFile: string;
  /** Length of one round, in seconds. */
  readonly roundS: number;
  /** How many rounds in all; the first `rounds - judgedRounds` are the warm-up. */
  readonly rounds: number;
  /** How many of the last readings are judged (at least 2). */
  readonly judgedRounds: number;
  /** Largest accepted median growth from one of those readings to the next, in MiB per round. */
  readonly growthLimitMiB: number;
  /** Where ghz writes its JSON reports. */
  readonly workDir: string;
  readonly log?: (line: string) => void;
}

/**
 * The levels judged (see {@link RssTrend}) and how they grow over the last `judged` of
 * them: the median growth from one round to the next (a plateau's is its noise, a leak's
 * its bytes per round), and the least-squares slope for the record.
 */
export function rssTrend(readings: readonly RssReading[], calls: readonly number[], judged: number): RssTrend {
  let newSpacePeak = 0;
  const levels = readings.map((r) => {
    newSpacePeak = Math.max(newSpacePeak, r.newSpace);
    return r.afterGc - newSpacePeak;
  });
  const tail = levels.slice(-judged);
  const growthPerRound = median(tail.slice(1).map((level, i) => level - tail[i]!));
  // Calls of the rounds whose growth is judged: the rounds after the first judged reading.
  const tailCalls = calls.slice(-(tail.length - 1));
  const meanCalls = tailCalls.reduce((a, b) => a + b, 0) / Math.max(1, tailCalls.length);
  return {
    levels,
    growthPerRound,
    growthPerCall: meanCalls > 0 ? growthPerRound / meanCalls : 0,
    slopePerRound: leastSquaresSlope(tail),
    judged: tail.length,
  };
}

/** The median of `values` (0 for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Slope of `values` against their index (0 for fewer than two). */
export function leastSquaresSlope(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  const meanX = (n - 1) / 2;
  const meanY = values.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  values.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return num / den;
}

/** Every response that was not OK (ghz's count includes errors). */
export function nonOkTotal(summary: GhzSummary): number {
  return summary.count - summary.okCount;
}

/** Runs one cell end to end; never throws for a failed check (see `failures`), only for a harness problem. */
export async function runLoadCell(options: LoadCellOptions): Promise<LoadCellResult> {
  const { scenario, plan, log = () => {} } = options;
  // One load generator on one address stands in for many clients: no share per address
  // (500 connections are more than a quarter of the cap under `ulimit -n` 1024).
  const args = serveArgs('--transport', options.transport, '--keys', options.keysFile, '--peer-share-percent', '100');
  const server = await startCli(args, {
    cpus: plan.pinned ? plan.single.serverCpus : [],
    // The 4 MiB young generation the image and the Deployment give `serve` (NODE_OPTIONS):
    // with V8's default its semi-spaces grow to 64 MiB under this load, pages a full GC keeps,
    // which the trend would read as growth round after round (src/cli/v8-flags.ts).
    nodeArgs: ['--max-semi-space-size=4', '--expose-gc', '--import', pathToFileURL(GC_PRELOAD).href],
    timeoutMs: 30_000,
  });
  const loadCpus = plan.single.loadCpus;
  const ghzRun = async (phase: string, durationS: number): Promise<GhzSummary> => {
    const run = await runGhz(
      options.ghz,
      {
        method: 'GenerateJwt',
        data: LOAD_REQUEST,
        connections: scenario.connections,
        concurrency: scenario.concurrency,
        durationS,
        cpus: loadCpus.length,
        port: server.port,
        output: join(options.workDir, `load-${scenario.name}-${options.transport}-${phase}.json`),
        name: `reliability ${scenario.name} ${options.transport} ${phase}`,
      },
      plan,
      loadCpus,
    );
    return summarizeGhzReport(run.report);
  };
  const readRss = async (phase: string): Promise<RssReading> => {
    await sleep(SETTLE_MS);
    const raw = rss(server);
    const { match } = await askForGc(server);
    const report = JSON.parse(match[1] ?? '{}') as GcReport;
    await sleep(200);
    const reading = { raw, afterGc: rss(server), newSpace: report.newSpaceResident, heapUsed: report.after.heapUsed };
    log(
      `load ${scenario.name} ${options.transport} ${phase}: VmRSS ${formatMiB(reading.raw, 1)} MiB -> ${formatMiB(reading.afterGc, 1)} MiB after a full GC ` +
        `(V8 heap used ${formatMiB(report.before.heapUsed, 1)} MiB -> ${formatMiB(report.after.heapUsed, 1)} MiB, total ${formatMiB(report.after.heapTotal, 1)} MiB, new space ${formatMiB(reading.newSpace, 1)} MiB)`,
    );
    return reading;
  };
  if (options.judgedRounds < 2 || options.rounds < options.judgedRounds) {
    server.kill();
    throw new Error('a load cell needs rounds >= judgedRounds >= 2');
  }
  try {
    log(
      `load ${scenario.name} on ${options.transport}: server pid ${server.pid}, port ${server.port}, ${options.rounds} rounds of ${options.roundS} s`,
    );
    const rounds: GhzSummary[] = [];
    const readings: RssReading[] = [];
    let rssPeakBytes = 0;
    const sampler = setInterval(() => {
      const value = statusBytes(server.pid, 'VmRSS');
      if (value !== null) rssPeakBytes = Math.max(rssPeakBytes, value);
    }, 1000);
    try {
      for (let round = 1; round <= options.rounds; round++) {
        const summary = await ghzRun(`round${round}`, options.roundS);
        rounds.push(summary);
        readings.push(await readRss(`round ${round} (${summary.count} calls, ${Math.round(summary.rpsOk)} OK/s)`));
      }
    } finally {
      clearInterval(sampler);
    }
    const exit = await server.stop(15_000);

    const failures: string[] = [];
    for (const [i, summary] of rounds.entries()) {
      const bad = nonOkTotal(summary);
      if (bad > 0) {
        failures.push(
          `round ${i + 1}: ${bad} non-OK of ${summary.count} (${JSON.stringify(summary.nonOkByStatus)}; ${JSON.stringify(summary.errors)})`,
        );
      }
      if (summary.okCount === 0) failures.push(`round ${i + 1}: no OK response at all`);
    }
    const trend = rssTrend(
      readings,
      rounds.map((r) => r.count),
      options.judgedRounds,
    );
    if (trend.growthPerRound > options.growthLimitMiB * MIB) {
      failures.push(
        `RSS after a full GC still grows over the last ${trend.judged} rounds: a median ${formatMiB(trend.growthPerRound, 2)} MiB per round ` +
          `(${Math.round(trend.growthPerCall)} bytes per call; limit ${options.growthLimitMiB} MiB per round); levels in MiB: ${formatLevels(trend.levels)}`,
      );
    }
    if (exit.code !== 0)
      failures.push(`server exited with ${exit.code ?? exit.signal} after SIGTERM, not 0:\n${server.stderr.slice(-2000)}`);
    return {
      scenario,
      transport: options.transport,
      roundS: options.roundS,
      rounds,
      readings,
      trend,
      growthLimitMiB: options.growthLimitMiB,
      rssPeakBytes,
      exitCode: exit.code,
      failures,
    };
  } finally {
    server.kill();
  }
}

/** One paragraph per cell: calls, errors, the RSS trend. */
export function formatLoadCell(result: LoadCellResult): string {
  const calls = result.rounds.reduce((sum, r) => sum + r.count, 0);
  const bad = result.rounds.reduce((sum, r) => sum + nonOkTotal(r), 0);
  const last = result.rounds.at(-1);
  const first = result.readings[0];
  const end = result.readings.at(-1);
  const { trend } = result;
  return (
    `${result.scenario.name} on ${result.transport} (${result.scenario.connections} connection(s), ${result.scenario.concurrency} in flight), ` +
    `${result.rounds.length} rounds of ${result.roundS} s: ${calls} calls, ${bad} non-OK` +
    `${last === undefined ? '' : `; last round ${Math.round(last.rpsOk)} OK/s, p99 ${last.latencyMs.p99.toFixed(1)} ms`}\n` +
    `  RSS after a full GC, less V8's new space, after each round (MiB): ${formatLevels(trend.levels)}\n` +
    `  over the last ${trend.judged}: median growth ${signedMiB(trend.growthPerRound)} MiB per round (${Math.round(trend.growthPerCall)} bytes per call; ` +
    `limit ${result.growthLimitMiB} MiB per round), least-squares slope ${signedMiB(trend.slopePerRound)} MiB per round\n` +
    (first === undefined || end === undefined
      ? ''
      : `  VmRSS after the first round ${formatMiB(first.raw, 1)} MiB (${formatMiB(first.afterGc, 1)} after GC), after the last ${formatMiB(end.raw, 1)} MiB ` +
        `(${formatMiB(end.afterGc, 1)} after GC), peak ${formatMiB(result.rssPeakBytes, 1)} MiB; V8 live heap ${formatMiB(first.heapUsed, 1)} -> ${formatMiB(end.heapUsed, 1)} MiB`) +
    `${result.failures.length === 0 ? '' : `\n  FAILED: ${result.failures.join('\n  FAILED: ')}`}`
  );
}

function signedMiB(bytes: number): string {
  return `${bytes >= 0 ? '+' : ''}${formatMiB(bytes, 2)}`;
}

function formatLevels(levels: readonly number[]): string {
  return levels.map((level) => formatMiB(level, 1)).join(', ');
}

function rss(server: CliServer): number {
  const value = statusBytes(server.pid, 'VmRSS');
  if (value === null) throw new Error(`cannot read VmRSS of the server (pid ${server.pid}); it exited?\n${server.stderr}`);
  return value;
}

/** Sends SIGUSR2 to the server (gc-preload.ts) and waits for its report line. */
function askForGc(server: CliServer): Promise<OutputMatch> {
  const from = server.stderr.length;
  server.signal('SIGUSR2');
  return server.waitFor('stderr', new RegExp(`${GC_DONE_LINE} (\\{.*\\})\\n`), 10_000, from);
}
