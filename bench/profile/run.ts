/**
 * `npm run profile -- [options]`: where one server's CPU time goes under the reference
 * load. Starts the server with `node --cpu-prof`, pinned like the 1-core benchmark cells
 * (server on the first CPU, ghz on the others), warms it up, drives GenerateJwt at
 * 1 connection x 50 in flight, stops it, and prints self time by category and by
 * function (summarize.ts). The .cpuprofile stays in the output folder for DevTools.
 * The profiler itself costs a few percent: compare profiles with profiles, and take
 * throughput from `npm run bench`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SUBJECTS_FILE, repoPath } from '../common/paths.js';
import { BENCH_ALGORITHMS, isBenchAlgorithm } from '../options/algorithms.js';
import { pinnedCommand, planCores } from '../ghz/cores.js';
import { locateGhz } from '../ghz/ghz-binary.js';
import { summarizeGhzReport } from '../ghz/ghz-report.js';
import { runGhz } from '../ghz/ghz-run.js';
import { writeKeysFile } from '../ghz/keys-file.js';
import { startServer } from '../ghz/server-process.js';
import { SERVERS } from '../ghz/servers.js';
import { formatProfileSummary, summarizeProfile, type CpuProfile } from './summarize.js';

const PROFILABLE = SERVERS.filter((s) => !s.cluster && s.build === undefined && s.methods.includes('GenerateJwt')).map((s) => s.name);

const HELP = `Usage: npm run profile -- [options]      (or: node dist/bench/profile/run.js [options])

Profiles one Node server (node --cpu-prof) under ghz load, GenerateJwt at 1 connection x 50
in flight, server pinned to the first CPU and ghz to the others, and prints its self time
by category and by function.

  --server NAME      ${PROFILABLE.join(', ')} (default jwt-grpc)
  --algorithm ALG    ${BENCH_ALGORITHMS.join(', ')} (default HS256)
  --seconds S        measured seconds (default 8), after a 2 s warm-up
  --out DIR          where the .cpuprofile and summary.txt go (default bench/results/profile-<server>-<alg>)
  -h, --help         this text
`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        server: { type: 'string', default: 'jwt-grpc' },
        algorithm: { type: 'string', default: 'HS256' },
        seconds: { type: 'string', default: '8' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`profile: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const spec = SERVERS.find((s) => s.name === values.server);
  const algorithm = values.algorithm;
  const seconds = Number(values.seconds);
  const problems = [
    spec === undefined || !PROFILABLE.includes(spec.name) ? `--server must be one of ${PROFILABLE.join(', ')}` : '',
    isBenchAlgorithm(algorithm) ? '' : `--algorithm must be one of ${BENCH_ALGORITHMS.join(', ')}`,
    Number.isFinite(seconds) && seconds >= 1 && seconds <= 600 ? '' : '--seconds must be a number from 1 to 600',
  ].filter(Boolean);
  if (problems.length > 0 || spec === undefined || !isBenchAlgorithm(algorithm)) {
    process.stderr.write(`profile: ${problems.join('; ')}\n`);
    return 2;
  }

  const out = resolve(values.out ?? repoPath('bench', 'results', `profile-${spec.name}-${algorithm.toLowerCase()}`));
  mkdirSync(out, { recursive: true });
  // One profile per folder: the summary reads the one this run writes.
  for (const old of readdirSync(out).filter((f) => f.endsWith('.cpuprofile'))) rmSync(join(out, old));
  const ghz = locateGhz((line) => process.stderr.write(`${line}\n`));
  const keys = writeKeysFile([algorithm]);
  const plan = planCores(1);
  const { serverCpus, loadCpus } = plan.single;
  try {
    const launch = spec.launch({ keysFile: keys.path, subjectsFile: SUBJECTS_FILE, cores: 1 });
    const profiled = { ...launch, args: ['--cpu-prof', `--cpu-prof-dir=${out}`, ...launch.args] };
    const server = await startServer(spec.name, { ...profiled, ...pinnedCommand(plan, serverCpus, profiled.command, profiled.args) }, spec.entryFile);
    const call = (durationS: number, name: string) => ({
      method: 'GenerateJwt' as const,
      data: { algorithm },
      connections: 1,
      concurrency: 50,
      durationS,
      cpus: loadCpus.length,
      port: server.port,
      output: join(out, `${name}.json`),
      name,
    });
    let ok = 0;
    let warmupOk = 0;
    try {
      const warmup = await runGhz(ghz, call(2, 'warmup'), plan, loadCpus);
      warmupOk = summarizeGhzReport(warmup.report).okCount;
      const run = await runGhz(ghz, call(seconds, 'ghz'), plan, loadCpus);
      ok = summarizeGhzReport(run.report).okCount;
    } finally {
      await server.stop();
    }
    const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error(`${spec.name} wrote no .cpuprofile into ${out}`);
    const summary = summarizeProfile(JSON.parse(readFileSync(join(out, file), 'utf8')) as CpuProfile);
    // The profile spans start-up and warm-up too; per-call figures divide by every call made.
    const text =
      `${spec.name}, GenerateJwt ${algorithm}, 1 connection x 50, ${seconds} s after a 2 s warm-up; server on CPU ${serverCpus.join(',')}, ghz on ${loadCpus.join(',')}` +
      `${plan.pinned ? '' : ' (not pinned: no taskset)'}\n${ok} OK calls measured (${warmupOk} in the warm-up)\n\n` +
      formatProfileSummary(summary, ok + warmupOk);
    writeFileSync(join(out, 'summary.txt'), `${text}\n`);
    process.stdout.write(`${text}\n\nprofile: ${join(out, file)}\n`);
    return 0;
  } finally {
    keys.remove();
  }
}

process.exitCode = await main();
