/**
 * `npm run profile -- --instructions`: the instructions one server executes per GenerateJwt,
 * counted by valgrind's callgrind, under the profile's load (1 connection x 50) but for a
 * fixed number of calls. Where `npm run bench` reads CPU time, which this VM moves by ±12 %
 * from one 3 s measurement to the next, an instruction count repeats to about 0.2 % run to
 * run: a change of 1-2 % in the work a call does shows in one run each, before and after.
 * It counts work, not time: cache misses and stalls are not in it, so a time claim still
 * comes from `npm run bench`.
 *
 * The server runs unbundled under `valgrind --tool=callgrind --separate-threads=yes`, with
 * `--perf-basic-prof` so that JIT code can be named. After the warm-up calls (V8's optimizing
 * compiler is done with the hot functions by then: its threads' share falls to a few percent),
 * the counters are zeroed, the measured calls made, and the counts dumped
 * (`callgrind_control`). The main thread's count is the figure; the other threads (V8's
 * compiler and GC helpers) are given beside it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { findOnPath } from '../kit/exec.js';
import { startServer } from '../kit/launcher.js';
import type { GhzCall } from '../ghz/ghz-args.js';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { withUnbundledCli } from '../macro/servers.js';
import type { LaunchCommand } from '../macro/servers.js';

/** What the Debian package is called, for the message when valgrind is missing. */
export const VALGRIND_INSTALL = 'apt-get install valgrind';

/** Valgrind's start of a Node server is slow (JIT code is re-translated): minutes, not seconds. */
const START_TIMEOUT_MS = 180_000;

/** A JIT code range from Node's `--perf-basic-prof` map (/tmp/perf-PID.map). */
export interface JitRange {
  readonly start: number;
  readonly end: number;
  readonly name: string;
}

/** The counts of one run: per OK call, the main thread's instructions and the other threads' together. */
export interface InstructionCount {
  readonly calls: number;
  readonly mainPerCall: number;
  readonly otherThreadsPerCall: number;
  /** Self instructions per call by function, largest first (main thread). */
  readonly functions: readonly { readonly name: string; readonly perCall: number }[];
}

/** The event total of a callgrind dump (its `summary:` line, or `totals:` where a dump has no summary). */
export function callgrindTotal(dump: string): number {
  const match = /^summary: (\d+)/m.exec(dump) ?? /^totals: (\d+)/m.exec(dump);
  if (match === null) throw new Error('a callgrind dump without a summary or totals line');
  return Number(match[1]);
}

/** The ranges of a perf map, in the order V8 wrote them (a later range may reuse an address). */
export function parsePerfMap(text: string): JitRange[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      const from = Number.parseInt(start as string, 16);
      return { start: from, end: from + Number.parseInt(size as string, 16), name: name.join(' ') };
    });
}

/** The name of the JIT code at `address`: the latest range holding it, or undefined. */
export function jitName(ranges: readonly JitRange[], address: number): string | undefined {
  for (let i = ranges.length - 1; i >= 0; i--) {
    const range = ranges[i] as JitRange;
    if (range.start <= address && address < range.end) return range.name;
  }
  return undefined;
}

/** Frames every sample passes through (main, the event loop): their self count is nothing, their name noise. */
const WRAPPERS = /below main|libc_start|node::Start\(|NodeMainInstance|SpinEventLoop|\?\?\?:main \[/;

/**
 * Self instructions by function from `callgrind_annotate --inclusive=no` output: JIT code
 * (`???:0x... [???]`) named from `ranges`, source paths and binaries dropped from the rest.
 */
export function selfByFunction(annotated: string, ranges: readonly JitRange[]): Map<string, number> {
  const totals = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    const match = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line);
    if (match === null || WRAPPERS.test(line) || /PROGRAM TOTALS/.test(line)) continue;
    const count = Number((match[1] as string).replace(/,/g, ''));
    let name = match[2] as string;
    const jit = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(name);
    if (jit !== null)
      name = (jitName(ranges, Number.parseInt(jit[1] as string, 16)) ?? `JIT code at 0x${jit[1]}`).replace(/file:\/\/\S*?\/dist\//, '');
    else name = name.replace(/ \[[^\]]*\]$/, '').replace(/^[^:]*:/, '');
    totals.set(name, (totals.get(name) ?? 0) + count);
  }
  return totals;
}

/** The valgrind and callgrind_control programs, or why they cannot be used. */
export function findValgrind(): { valgrind: string; control: string; annotate: string } | string {
  const valgrind = findOnPath('valgrind');
  const control = findOnPath('callgrind_control');
  const annotate = findOnPath('callgrind_annotate');
  if (valgrind === null || control === null || annotate === null)
    return `valgrind (with callgrind_control and callgrind_annotate) is not installed (\`${VALGRIND_INSTALL}\`, needs root)`;
  return { valgrind, control, annotate };
}

export interface CountOptions {
  readonly name: string;
  readonly launch: LaunchCommand;
  readonly plan: CorePlan;
  readonly serverCpus: readonly number[];
  readonly loadCpus: readonly number[];
  readonly ghz: string;
  /** The ghz call of `calls` calls to `port`. */
  readonly call: (port: number, calls: number, name: string) => GhzCall;
  readonly warmupCalls: number;
  readonly calls: number;
  readonly out: string;
}

/** Runs the server under callgrind, warms it, counts `calls` calls; see the module comment. */
export async function countInstructions(options: CountOptions): Promise<InstructionCount> {
  const tools = findValgrind();
  if (typeof tools === 'string') throw new Error(tools);
  const { launch, out } = options;
  // One count per folder: the files of an earlier run would be read as this one's threads.
  for (const old of readdirSync(out).filter((f) => f.startsWith('callgrind.out.'))) rmSync(join(out, old));
  const dumpBase = join(out, 'callgrind.out');
  const args = [
    '--tool=callgrind',
    '--separate-threads=yes',
    // V8 writes and rewrites its code: valgrind must notice, or it runs stale translations.
    '--smc-check=all-non-file',
    '--dump-instr=no',
    `--callgrind-out-file=${dumpBase}.%p`,
    launch.command,
    '--perf-basic-prof',
    ...withUnbundledCli(launch.args),
  ];
  const { command, args: pinned } = pinnedCommand(options.plan, options.serverCpus, tools.valgrind, args);
  const server = await startServer(options.name, command, pinned, { env: launch.env, timeoutMs: START_TIMEOUT_MS });
  const perfMap = `/tmp/perf-${server.pid}.map`;
  try {
    await runGhz(options.ghz, options.call(server.port, options.warmupCalls, 'warmup'), options.plan, options.loadCpus);
    execFileSync(tools.control, ['--zero', String(server.pid)], { stdio: 'ignore' });
    const run = await runGhz(options.ghz, options.call(server.port, options.calls, 'ghz'), options.plan, options.loadCpus);
    execFileSync(tools.control, ['--dump', String(server.pid)], { stdio: 'ignore' });
    const ok = summarizeGhzReport(run.report).okCount;
    if (ok === 0) throw new Error(`${options.name} answered no call OK under valgrind`);
    return readCounts(out, `callgrind.out.${server.pid}.`, perfMap, ok, tools.annotate);
  } finally {
    server.kill();
    await server.exited;
    // Node leaves its perf map in /tmp: it goes, read or not (a count that failed).
    rmSync(perfMap, { force: true });
  }
}

/** The dump's per-thread files (`callgrind.out.PID.1-01`, `-02`, ...): the first is the main thread. */
function readCounts(out: string, prefix: string, mapFile: string, ok: number, annotate: string): InstructionCount {
  const files = readdirSync(out)
    .filter((f) => f.startsWith(prefix) && /\.1-\d+$/.test(f))
    .sort();
  if (files.length === 0) throw new Error(`callgrind wrote no dump ${prefix}1-* into ${out}`);
  const totals = files.map((f) => callgrindTotal(readFileSync(join(out, f), 'utf8')));
  const main = join(out, files[0] as string);
  const annotated = execFileSync(annotate, ['--inclusive=no', '--threshold=100', main], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const ranges = existsSync(mapFile) ? parsePerfMap(readFileSync(mapFile, 'utf8')) : [];
  const functions = [...selfByFunction(annotated, ranges)]
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => ({ name, perCall: count / ok }));
  return {
    calls: ok,
    mainPerCall: (totals[0] as number) / ok,
    otherThreadsPerCall: totals.slice(1).reduce((sum, n) => sum + n, 0) / ok,
    functions,
  };
}

/** The summary's text: the counts, then the `top` functions by self instructions. */
export function formatInstructionCount(count: InstructionCount, top = 40): string {
  const lines = [
    `${count.calls} OK calls counted: ${Math.round(count.mainPerCall)} instructions per call on the main thread, ${Math.round(count.otherThreadsPerCall)} on the others`,
    '',
    'self instructions per call by function (main thread, largest first):',
    ...count.functions.slice(0, top).map((f) => `${String(Math.round(f.perCall)).padStart(9)}  ${f.name}`),
  ];
  return lines.join('\n');
}
