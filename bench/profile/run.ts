/**
 * `npm run profile -- [options]`: where one server's CPU time goes under the benchmark's
 * 1-core load. Starts the server with `node --cpu-prof`, pinned as in the 1-core scenarios
 * (server on the first CPU, ghz on the others), warms it up, drives GenerateJwt at
 * 1 connection x 50 in flight, stops it, and prints self time by category and by
 * function (summarize.ts). Ours runs unbundled (dist/src/cli/main.js, the same code as the
 * executable's chunks), so that each frame names its source file. The .cpuprofile stays in the output folder for DevTools.
 * The profiler itself costs a few percent: compare profiles with profiles, and take
 * throughput from `npm run bench`. It also prints the calls made per second of the
 * server's CPU (utime + stime over the measured run), a figure that a busy machine
 * disturbs less than calls per second of wall time. Opt-in rows that need something made
 * first (the tracing rows' OTLP sink, the mutual-TLS rows' certificates) get it as the
 * benchmark makes it (macro/row-assets.ts).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { registerCleanup } from '../kit/cleanup.js';
import { SUBJECTS_FILE, repoPath } from '../kit/paths.js';
import { type ParsedCommandLine, UsageError, parseChoice, parseFlags, parseInteger, parseNumber, runProgram } from '../kit/program.js';
import type { GhzCall } from '../ghz/ghz-args.js';
import { GO_TOOLS, ensureGoTool } from '../kit/tools.js';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { planCores } from '../harness/cores.js';
import { writeKeysFile } from '../harness/keys-file.js';
import { cpuSeconds } from '../kit/proc.js';
import { type PreparedAssets, prepareRowAssets } from '../macro/row-assets.js';
import { SERVERS, type ServerSpec, startBenchServer, withUnbundledCli } from '../macro/servers.js';
import { BENCH_ALGORITHMS, type BenchAlgorithm } from '../options/algorithms.js';
import { formatProfileSummary, summarizeProfile, type CpuProfile } from './summarize.js';
import { VALGRIND_INSTALL, countInstructions, formatInstructionCount } from './instructions.js';

/** --instructions: the calls counted, and those made before the count so that V8's compiler is done (its threads' count falls to a few percent). */
const DEFAULT_COUNTED_CALLS = 10_000;
const DEFAULT_WARMUP_CALLS = 20_000;
/** How long ghz may take over the calls of a count under valgrind (ES256: ~5 ms a call there). */
const COUNTED_CALLS_TIMEOUT_S = 900;

/** Single-process Node servers answering GenerateJwt; not the rows measured under a background load, which this does not drive. */
const PROFILABLE = SERVERS.filter(
  (s) => !s.cluster && s.build === undefined && s.backgroundLoad === undefined && s.methods.includes('GenerateJwt'),
).map((s) => s.name);

const HELP = `Usage: npm run profile -- [options]      (or: node dist/bench/profile/run.js [options])

Profiles one Node server (node --cpu-prof) under ghz load, GenerateJwt at 1 connection x 50
in flight, server pinned to the first CPU and ghz to the others, and prints its self time
by category and by function.

  --server NAME      ${PROFILABLE.join(', ')} (default jwt-grpc)
  --algorithm ALG    ${BENCH_ALGORITHMS.join(', ')} (default HS256)
  --seconds S        measured seconds (default 8), after a 2 s warm-up
  --instructions     count instructions per call under valgrind's callgrind instead (needs
                     valgrind: ${VALGRIND_INSTALL}); repeats to ~0.2 %, where CPU time moves by 10 %
  --calls N          with --instructions: calls counted (default ${DEFAULT_COUNTED_CALLS})
  --warmup-calls N   with --instructions: calls before the count (default ${DEFAULT_WARMUP_CALLS})
  --out DIR          where the .cpuprofile (or callgrind dumps) and summary.txt go (default bench/results/profile-<server>-<alg>)
  -h, --help         this text
`;

interface ProfileOptions {
  readonly server: ServerSpec;
  readonly algorithm: BenchAlgorithm;
  readonly seconds: number;
  readonly out: string;
  /** Count instructions (callgrind) instead of sampling time: the calls warmed and counted. */
  readonly instructions?: { readonly warmupCalls: number; readonly calls: number };
}

function parseProfileCommandLine(argv: readonly string[]): ParsedCommandLine<ProfileOptions> {
  const values = parseFlags(argv, {
    server: { type: 'string', default: 'jwt-grpc' },
    algorithm: { type: 'string', default: 'HS256' },
    seconds: { type: 'string', default: '8' },
    instructions: { type: 'boolean', default: false },
    calls: { type: 'string' },
    'warmup-calls': { type: 'string' },
    out: { type: 'string' },
  });
  if (values === 'help') return { kind: 'help' };
  const name = parseChoice('--server', values.server, PROFILABLE);
  const server = SERVERS.find((s) => s.name === name) as ServerSpec;
  const algorithm = parseChoice('--algorithm', values.algorithm, BENCH_ALGORITHMS);
  const seconds = parseNumber('--seconds', values.seconds, 1, 600);
  const out = resolve(values.out ?? repoPath('bench', 'results', `profile-${server.name}-${algorithm.toLowerCase()}`));
  if (!values.instructions) {
    if (values.calls !== undefined || values['warmup-calls'] !== undefined)
      throw new UsageError('--calls and --warmup-calls go with --instructions');
    return { kind: 'run', options: { server, algorithm, seconds, out } };
  }
  const calls = parseInteger('--calls', values.calls ?? String(DEFAULT_COUNTED_CALLS), 100, 1_000_000);
  const warmupCalls = parseInteger('--warmup-calls', values['warmup-calls'] ?? String(DEFAULT_WARMUP_CALLS), 0, 10_000_000);
  return { kind: 'run', options: { server, algorithm, seconds, out, instructions: { calls, warmupCalls } } };
}

async function profile({ server: spec, algorithm, seconds, out, instructions }: ProfileOptions): Promise<number> {
  mkdirSync(out, { recursive: true });
  // One profile per folder: the summary reads the one this run writes.
  for (const old of readdirSync(out).filter((f) => f.endsWith('.cpuprofile'))) rmSync(join(out, old));
  const ghz = ensureGoTool(GO_TOOLS.ghz, (line) => process.stderr.write(`${line}\n`));
  const keys = writeKeysFile([algorithm]);
  const unregister = registerCleanup(() => keys.remove());
  const plan = planCores(1);
  const { serverCpus, loadCpus } = plan.single;
  let prepared: PreparedAssets | undefined;
  try {
    prepared = await prepareRowAssets(new Set(spec.needs ?? []), [algorithm], plan, loadCpus);
    const unmet = [...prepared.missing.values()];
    if (unmet.length > 0) throw new Error(`${spec.name} cannot run here: ${unmet.join('; ')}`);
    const assets = prepared.assets;
    const tls = spec.needs?.includes('mtls') === true ? (assets.tls?.client ?? undefined) : undefined;
    const launch = spec.launch({ keysFile: keys.path, subjectsFile: SUBJECTS_FILE, workers: 1, assets });
    /** GenerateJwt at 1 connection x 50 to `port`, for `extent` (a duration, or a number of calls within one). */
    const call = (port: number, name: string, extent: Pick<GhzCall, 'durationS' | 'totalCalls'>): GhzCall => ({
      method: 'GenerateJwt',
      data: { algorithm },
      connections: 1,
      concurrency: 50,
      ...extent,
      cpus: loadCpus.length,
      port,
      output: join(out, `${name}.json`),
      name,
      ...(tls === undefined ? {} : { tls }),
    });
    if (instructions !== undefined) {
      const count = await countInstructions({
        name: spec.name,
        launch,
        plan,
        serverCpus,
        loadCpus,
        ghz,
        out,
        ...instructions,
        // Under valgrind a call is ~50 times slower: ghz is given minutes before it is stopped.
        call: (port, calls, name) => call(port, name, { totalCalls: calls, durationS: COUNTED_CALLS_TIMEOUT_S }),
      });
      const text =
        `${spec.name}, GenerateJwt ${algorithm}, 1 connection x 50, under callgrind; server on CPU ${serverCpus.join(',')}, ghz on ${loadCpus.join(',')}; ` +
        `${instructions.warmupCalls} calls before the count\n${formatInstructionCount(count)}`;
      writeFileSync(join(out, 'summary.txt'), `${text}\n`);
      process.stdout.write(`${text}\n`);
      return 0;
    }
    // The unbundled CLI: the stage table tells the call's stages apart by source file.
    const server = await startBenchServer(
      spec,
      { ...launch, args: ['--cpu-prof', `--cpu-prof-dir=${out}`, ...withUnbundledCli(launch.args)] },
      plan,
      serverCpus,
    );
    let ok = 0;
    let warmupOk = 0;
    let cpuS = Number.NaN;
    try {
      const warmup = await runGhz(ghz, call(server.port, 'warmup', { durationS: 2 }), plan, loadCpus);
      warmupOk = summarizeGhzReport(warmup.report).okCount;
      const cpuBefore = cpuSeconds(server.pid);
      const run = await runGhz(ghz, call(server.port, 'ghz', { durationS: seconds }), plan, loadCpus);
      const cpuAfter = cpuSeconds(server.pid);
      ok = summarizeGhzReport(run.report).okCount;
      if (cpuBefore !== null && cpuAfter !== null) cpuS = cpuAfter - cpuBefore;
    } finally {
      await server.stop();
    }
    const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error(`${spec.name} wrote no .cpuprofile into ${out}`);
    const summary = summarizeProfile(JSON.parse(readFileSync(join(out, file), 'utf8')) as CpuProfile);
    // The profile spans start-up and warm-up too; per-call figures divide by every call made.
    const text =
      `${spec.name}, GenerateJwt ${algorithm}, 1 connection x 50, ${seconds} s after a 2 s warm-up; server on CPU ${serverCpus.join(',')}, ghz on ${loadCpus.join(',')}` +
      `${plan.pinned ? '' : ' (not pinned: no taskset)'}\n${ok} OK calls measured (${warmupOk} in the warm-up)` +
      `${Number.isFinite(cpuS) && cpuS > 0 ? `, ${cpuS.toFixed(2)} server CPU-seconds: ${Math.round(ok / cpuS)} calls per CPU-second` : ''}\n\n` +
      formatProfileSummary(summary, ok + warmupOk, Number.isFinite(cpuS) && cpuS > 0 && ok > 0 ? (cpuS * 1e6) / ok : undefined);
    writeFileSync(join(out, 'summary.txt'), `${text}\n`);
    process.stdout.write(`${text}\n\nprofile: ${join(out, file)}\n`);
    return 0;
  } finally {
    unregister();
    keys.remove();
    for (const note of (await prepared?.close()) ?? []) process.stderr.write(`${note}\n`);
  }
}

await runProgram({ name: 'profile', url: import.meta.url, help: () => HELP, parse: parseProfileCommandLine, run: profile });
