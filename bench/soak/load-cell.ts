import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatMiB } from '../common/format.js';
import { repoPath } from '../common/paths.js';
import { sleep } from '../kit/wait.js';
import { type GhzSummary, summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { type CliServer, serveArgs, startCli } from '../kit/cli.js';
import type { CorePlan } from '../harness/cores.js';
import type { OutputMatch } from '../kit/launcher.js';
import { statusBytes } from '../kit/proc.js';
import type { Transport } from '../../src/lib.js';
import { GC_DONE_LINE, type GcReport } from './gc-preload.js';

/**
 * One load cell of the reliability checks: a load scenario against a fresh
 * single-process server on the transport given, pinned to its own CPU, warm-up runs of
 * the same shape, then the measured run.
 *
 * What must hold:
 * - zero non-OK responses, warm-up included (no RESOURCE_EXHAUSTED, ENHANCE_YOUR_CALM,
 *   RST_STREAM, Unavailable). ghz runs with `--duration-stop=wait`, so the calls in
 *   flight when the duration ends finish and count, instead of being cut as errors;
 * - the server's VmRSS after the measured run within {@link RSS_GROWTH_LIMIT} of its
 *   VmRSS after the warm-up: a leak per call or per stream shows as growth.
 *
 * How RSS is read, and why (measured on Node 24, 2 shared cores):
 * - after a full GC in the server (gc-preload.ts): without it a reading lands anywhere
 *   on V8's saw-tooth (130 to 180 MiB for the same server and load);
 * - less the growth of V8's young generation in between: Node 24's V8 grows the new
 *   space up to 2 x 64 MiB while calls allocate fast and keeps its pages, empty, after
 *   a GC; growth = (after - warm - max(0, newSpace - newSpace')) / warm. A new space
 *   that shrank excuses nothing: V8 keeps the freed pages resident in its page pool
 *   (seen: new space 127 -> 1.3 MiB with VmRSS 295 -> 306 MiB);
 * - after a warm-up that reached a plateau: V8's heap and malloc keep what a faster
 *   phase made them grow, so RSS follows the highest throughput seen so far, and on a
 *   shared machine one 5 s warm-up at 1,400 calls/s followed by a run at 10,000 calls/s
 *   "grew" 60 % with no leak. Warm-up rounds therefore repeat (bounded) until RSS after
 *   a round is within {@link PLATEAU} of the round before.
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

/** Largest accepted RSS growth from after the warm-up to after the measured run. */
export const RSS_GROWTH_LIMIT = 0.2;

/** Warm-up has reached its plateau when RSS after a round grew less than this over the round before. */
export const PLATEAU = 0.05;

/** The GC probe preloaded into the server (compiled: `npm run build`). */
const GC_PRELOAD = repoPath('dist', 'bench', 'soak', 'gc-preload.js');

/** Pause before each RSS reading, so that all are taken with the server equally idle. */
const SETTLE_MS = 500;

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

export interface LoadCellResult {
  readonly scenario: LoadScenario;
  readonly transport: Transport;
  /** Length of one warm-up round, and how many ran. */
  readonly warmupRoundS: number;
  readonly warmupRounds: number;
  readonly durationS: number;
  /** Every warm-up round, in order. */
  readonly warmup: readonly GhzSummary[];
  readonly measured: GhzSummary;
  readonly afterWarmup: RssReading;
  readonly after: RssReading;
  /** Highest VmRSS sampled (every second) during the measured run. */
  readonly rssPeakBytes: number;
  /** Growth of VmRSS after GC, less the new space's growth, relative to VmRSS after warm-up: what is checked. */
  readonly rssGrowth: number;
  /** Plain growth of VmRSS after GC (new space included), for the record. */
  readonly plainRssGrowth: number;
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
  /** Length of one warm-up round. */
  readonly warmupRoundS: number;
  /** Warm-up rounds: at least `min`, then more while RSS still grows, at most `max`. */
  readonly warmupRounds: { readonly min: number; readonly max: number };
  readonly durationS: number;
  /** Where ghz writes its JSON reports. */
  readonly workDir: string;
  readonly log?: (line: string) => void;
}

/** Every response that was not OK (ghz's count includes errors). */
export function nonOkTotal(summary: GhzSummary): number {
  return summary.count - summary.okCount;
}

/** Runs one cell end to end; never throws for a failed check (see `failures`), only for a harness problem. */
export async function runLoadCell(options: LoadCellOptions): Promise<LoadCellResult> {
  const { scenario, plan, log = () => {} } = options;
  const server = await startCli(serveArgs('--transport', options.transport, '--keys', options.keysFile), {
    cpus: plan.pinned ? plan.single.serverCpus : [],
    nodeArgs: ['--expose-gc', '--import', pathToFileURL(GC_PRELOAD).href],
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
  try {
    log(`load ${scenario.name} on ${options.transport}: server pid ${server.pid}, port ${server.port}`);
    const warmup: GhzSummary[] = [];
    let afterWarmup: RssReading | undefined;
    for (let round = 1; round <= options.warmupRounds.max; round++) {
      const summary = await ghzRun(`warmup${round}`, options.warmupRoundS);
      warmup.push(summary);
      const reading = await readRss(`warm-up ${round} (${summary.count} calls, ${Math.round(summary.rpsOk)} OK/s)`);
      const steady = afterWarmup !== undefined && reading.afterGc <= afterWarmup.afterGc * (1 + PLATEAU);
      afterWarmup = reading;
      if (round >= options.warmupRounds.min && steady) break;
    }
    if (afterWarmup === undefined) throw new Error('warmupRounds.max must be at least 1');

    log(`load ${scenario.name} ${options.transport}: measured run ${options.durationS} s`);
    let rssPeakBytes = afterWarmup.raw;
    const sampler = setInterval(() => {
      const value = statusBytes(server.pid, 'VmRSS');
      if (value !== null) rssPeakBytes = Math.max(rssPeakBytes, value);
    }, 1000);
    let measured: GhzSummary;
    try {
      measured = await ghzRun('measured', options.durationS);
    } finally {
      clearInterval(sampler);
    }
    const after = await readRss(`measured (${measured.count} calls, ${Math.round(measured.rpsOk)} OK/s)`);
    const exit = await server.stop(15_000);

    const failures: string[] = [];
    for (const [phase, summary] of [...warmup.map((w, i) => [`warm-up ${i + 1}`, w] as const), ['measured run', measured] as const]) {
      const bad = nonOkTotal(summary);
      if (bad > 0) {
        failures.push(`${phase}: ${bad} non-OK of ${summary.count} (${JSON.stringify(summary.nonOkByStatus)}; ${JSON.stringify(summary.errors)})`);
      }
      if (summary.okCount === 0) failures.push(`${phase}: no OK response at all`);
    }
    const plainRssGrowth = (after.afterGc - afterWarmup.afterGc) / afterWarmup.afterGc;
    // Only the new space's growth is excused. When it shrinks, V8 keeps the pages in its
    // page pool (still resident), so subtracting the drop would count it as a leak.
    const newSpaceGrowth = Math.max(0, after.newSpace - afterWarmup.newSpace);
    const rssGrowth = (after.afterGc - afterWarmup.afterGc - newSpaceGrowth) / afterWarmup.afterGc;
    if (rssGrowth > RSS_GROWTH_LIMIT) {
      failures.push(
        `RSS after a full GC grew ${pct(rssGrowth)} beyond V8's young generation (${formatMiB(afterWarmup.afterGc, 1)} MiB after warm-up -> ` +
          `${formatMiB(after.afterGc, 1)} MiB after the run; new space ${formatMiB(afterWarmup.newSpace, 1)} MiB -> ${formatMiB(after.newSpace, 1)} MiB; limit ${RSS_GROWTH_LIMIT * 100} %)`,
      );
    }
    if (exit.code !== 0) failures.push(`server exited with ${exit.code ?? exit.signal} after SIGTERM, not 0:\n${server.stderr.slice(-2000)}`);
    return {
      scenario,
      transport: options.transport,
      warmupRoundS: options.warmupRoundS,
      warmupRounds: warmup.length,
      durationS: options.durationS,
      warmup,
      measured,
      afterWarmup,
      after,
      rssPeakBytes,
      rssGrowth,
      plainRssGrowth,
      exitCode: exit.code,
      failures,
    };
  } finally {
    server.kill();
  }
}

/** One paragraph per cell: calls, errors, RSS. */
export function formatLoadCell(result: LoadCellResult): string {
  const m = result.measured;
  const warmCalls = result.warmup.reduce((sum, w) => sum + w.count, 0);
  const warmBad = result.warmup.reduce((sum, w) => sum + nonOkTotal(w), 0);
  const { afterWarmup: w, after: a } = result;
  return (
    `${result.scenario.name} on ${result.transport} (${result.scenario.connections} connection(s), ${result.scenario.concurrency} in flight), ${result.durationS} s: ` +
    `${m.count} calls, ${m.okCount} OK, ${nonOkTotal(m)} non-OK${nonOkTotal(m) > 0 ? ` ${JSON.stringify(m.nonOkByStatus)}` : ''}, ` +
    `${Math.round(m.rpsOk)} OK/s, p99 ${m.latencyMs.p99.toFixed(1)} ms\n` +
    `  warm-up ${result.warmupRounds} x ${result.warmupRoundS} s: ${warmCalls} calls, ${warmBad} non-OK\n` +
    `  RSS after a full GC: ${formatMiB(w.afterGc, 1)} MiB after warm-up -> ${formatMiB(a.afterGc, 1)} MiB after the run (${pct(result.plainRssGrowth)}; ` +
    `${pct(result.rssGrowth)} less V8 new-space growth, ${formatMiB(w.newSpace, 1)} MiB -> ${formatMiB(a.newSpace, 1)} MiB; limit ${RSS_GROWTH_LIMIT * 100} %)\n` +
    `  RSS before the GC: ${formatMiB(w.raw, 1)} MiB -> ${formatMiB(a.raw, 1)} MiB, peak ${formatMiB(result.rssPeakBytes, 1)} MiB; V8 live heap ${formatMiB(w.heapUsed, 1)} MiB -> ${formatMiB(a.heapUsed, 1)} MiB` +
    `${result.failures.length === 0 ? '' : `\n  FAILED: ${result.failures.join('\n  FAILED: ')}`}`
  );
}

function pct(fraction: number): string {
  return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)} %`;
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
