/**
 * `npm run bench:key-backends`: ES256 GenerateJwt through `jwt-grpc serve` (one process,
 * pinned to one core when taskset is there) with the key in memory, in SoftHSM2
 * (PKCS#11) and in local-kms (AWS KMS), driven by ghz at 1, 8 and 64 calls in flight.
 * Per row: calls a second, the server's CPU per call (/proc, the whole process), and p99
 * latency. Every source's server stays up and the cells are interleaved round by round,
 * so the ratios compare cells measured under the same load; on a shared machine read the
 * ratios rather than the absolute numbers.
 *
 *   npm run bench:key-backends -- [--duration 5] [--rounds 3] [--concurrency 1,8,64]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { GO_TOOLS, ensureGoTool } from '../kit/tools.js';
import { type CliServer, runCli, serveArgs, startCli } from '../kit/cli.js';
import { runToExit } from '../kit/launcher.js';
import { cpuSeconds } from '../kit/proc.js';
import { findLocalKms, kmsEnv, softToken, softhsmMissing, startLocalKms } from '../kit/hsm.js';
import { freePort } from '../kit/ports.js';
import { PROTO_PATH } from '../../src/base/package-root.js';
import { markdownTable } from '../common/markdown.js';

/** The reference source's name. */
export const MEMORY = 'in memory';

/** One cell: a key source at one number of calls in flight. */
export interface KeyBackendRow {
  readonly source: string;
  readonly concurrency: number;
  readonly callsPerSecond: number;
  readonly cpuMicrosPerCall: number;
  readonly p99Ms: number;
  readonly errors: number;
}

/** What {@link measureKeyBackends} measures, and where it says what it does. */
export interface KeyBackendsOptions {
  readonly ghz: string;
  /** `memory` always runs (the reference); `pkcs11` and `kms` when named and installed. */
  readonly sources: ReadonlySet<string>;
  readonly durationS: number;
  /** Calls in flight, one cell each. */
  readonly levels: readonly number[];
  /** Rounds, each measuring every source at every level in turn. */
  readonly rounds: number;
  /** The CPUs the servers are pinned to (empty: not pinned). */
  readonly serverCpus: readonly number[];
  /** Extra SoftHSM2 rows, one per libuv thread pool size (UV_THREADPOOL_SIZE) given; absent: the default pool (4) only. */
  readonly pkcs11ThreadPools?: readonly number[];
  readonly log: (line: string) => void;
}

/** One ghz run against `port`; the server's CPU seconds over it, read from /proc. */
async function measure(
  ghz: string,
  server: CliServer,
  source: string,
  concurrency: number,
  durationS: number,
  log: (line: string) => void,
): Promise<KeyBackendRow> {
  const args = [
    '--insecure',
    '--proto',
    PROTO_PATH,
    '--call',
    'jwt.services.JwtService.GenerateJwt',
    '-d',
    '{"subject":"ada@example.com","algorithm":"ES256"}',
    '-c',
    String(concurrency),
    '--connections',
    '1',
    '-z',
    `${durationS}s`,
    '--format',
    'json',
    `127.0.0.1:${server.port}`,
  ];
  // Warm-up: the first calls open sessions and JIT-compile.
  // Asynchronous: a blocked event loop would stop reading local-kms's log pipe, and local-kms would stall writing to it.
  await runToExit(ghz, [...args.slice(0, -5), '-n', String(200 * concurrency), '--format', 'json', `127.0.0.1:${server.port}`], {
    timeoutMs: 60_000,
  });
  const before = cpuSeconds(server.pid) ?? 0;
  const run = await runToExit(ghz, args, { timeoutMs: (durationS + 30) * 1000 });
  const cpu = (cpuSeconds(server.pid) ?? 0) - before;
  if (run.code !== 0 && run.stdout === '') throw new Error(`ghz failed: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as {
    count: number;
    latencyDistribution: { percentage: number; latency: number }[] | null;
    statusCodeDistribution: Record<string, number>;
    errorDistribution: Record<string, number> | null;
  };
  const ok = report.statusCodeDistribution['OK'] ?? 0;
  // ghz cancels the calls in flight when its time is up ("use of closed network connection"): not the server's errors.
  const cut = Object.entries(report.errorDistribution ?? {})
    .filter(([message]) => /closed network connection|transport is closing/.test(message))
    .reduce((sum, [, count]) => sum + count, 0);
  const failures = Object.keys(report.errorDistribution ?? {}).filter(
    (message) => !/closed network connection|transport is closing/.test(message),
  );
  if (failures.length > 0) log(`${source} c=${concurrency} errors: ${failures.join(' | ').slice(0, 1500)}`);
  const p99 = report.latencyDistribution?.find((entry) => entry.percentage === 99)?.latency ?? Number.NaN;
  return {
    source,
    concurrency,
    callsPerSecond: ok / durationS,
    cpuMicrosPerCall: ok === 0 ? Number.NaN : (cpu / ok) * 1e6,
    p99Ms: p99 / 1e6,
    errors: report.count - ok - cut,
  };
}

/** A key source the rows measure: its name, its key file and the environment that reaches it. */
interface Source {
  readonly name: string;
  readonly keysFile: string;
  readonly env: Record<string, string>;
}

/** Every cell of one source and level, and their medians (the ratio is taken round by round, to in memory's same round). */
export interface KeyBackendCell {
  readonly source: string;
  readonly concurrency: number;
  readonly callsPerSecond: number;
  readonly ratioToMemory: number;
  readonly cpuMicrosPerCall: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly rounds: readonly KeyBackendRow[];
}

/** `macro.keyBackends` in results.json (`--features pkcs11,kms`): ES256 GenerateJwt, key in memory against handles. */
export interface KeyBackendResults {
  readonly durationS: number;
  readonly rounds: number;
  readonly serverCpus: readonly number[];
  readonly cells: readonly KeyBackendCell[];
  /** Why a source asked for did not run (SoftHSM2 or local-kms missing). */
  readonly skipped: readonly string[];
}

function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Every source's server runs for the whole measurement; round after round, each level is
 * measured on each source in turn, so in memory and a handle share the machine's weather
 * (a shared machine's load moves within seconds).
 */
async function interleaved(options: KeyBackendsOptions, sources: readonly Source[]): Promise<KeyBackendRow[]> {
  const { ghz, levels, durationS, log, rounds } = options;
  const servers: CliServer[] = [];
  try {
    for (const source of sources)
      servers.push(await startCli(serveArgs('--keys', source.keysFile, '--no-jti'), { env: source.env, cpus: options.serverCpus }));
    const rows: KeyBackendRow[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const concurrency of levels) {
        for (const [at, source] of sources.entries()) {
          const row = await measure(ghz, servers[at] as CliServer, source.name, concurrency, durationS, log);
          log(
            `round ${round + 1}, ${source.name} c=${concurrency}: ${row.callsPerSecond.toFixed(0)}/s, ${row.cpuMicrosPerCall.toFixed(0)} µs CPU/call, p99 ${row.p99Ms.toFixed(2)} ms`,
          );
          rows.push(row);
        }
      }
    }
    return rows;
  } finally {
    for (const server of servers) {
      server.signal('SIGTERM');
      await server.closed;
    }
  }
}

/** The medians per source and level; a handle's ratio is the median of its ratios to in memory's same round (rows in round order). */
export function keyBackendCells(rows: readonly KeyBackendRow[], sources: readonly string[], levels: readonly number[]): KeyBackendCell[] {
  const cells: KeyBackendCell[] = [];
  for (const name of sources) {
    const source = { name };
    for (const concurrency of levels) {
      const mine = rows.filter((row) => row.source === source.name && row.concurrency === concurrency);
      const memory = rows.filter((row) => row.source === MEMORY && row.concurrency === concurrency);
      cells.push({
        source: source.name,
        concurrency,
        callsPerSecond: median(mine.map((row) => row.callsPerSecond)),
        ratioToMemory: median(mine.map((row, round) => row.callsPerSecond / (memory[round]?.callsPerSecond ?? Number.NaN))),
        cpuMicrosPerCall: median(mine.map((row) => row.cpuMicrosPerCall)),
        p99Ms: median(mine.map((row) => row.p99Ms)),
        errors: mine.reduce((sum, row) => sum + row.errors, 0),
        rounds: mine,
      });
    }
  }
  return cells;
}

/** The sources asked for and installed, their keys created in `dir`; `stop` ends local-kms. */
async function prepareSources(
  options: KeyBackendsOptions,
  dir: string,
): Promise<{ sources: Source[]; skipped: string[]; stop: () => Promise<void> }> {
  const { sources: asked, log } = options;
  const sources: Source[] = [];
  const skipped: string[] = [];
  let stop = async (): Promise<void> => undefined;
  const memoryFile = join(dir, 'memory.json');
  await runCli(['keys', 'generate', '--alg', 'ES256', '--out', memoryFile]);
  sources.push({ name: MEMORY, keysFile: memoryFile, env: {} });
  const noHsm = softhsmMissing();
  if (asked.has('pkcs11') && noHsm === undefined) {
    const token = softToken(join(dir, 'hsm'));
    const file = join(dir, 'pkcs11.json');
    const made = await runCli(['keys', 'generate', '--alg', 'ES256', '--pkcs11', token.uri('bench-es256'), '--out', file], {
      env: token.env,
    });
    if (made.code !== 0) throw new Error(made.stderr);
    sources.push({ name: 'SoftHSM2 (PKCS#11)', keysFile: file, env: { ...token.env } });
    for (const size of options.pkcs11ThreadPools ?? []) {
      sources.push({
        name: `SoftHSM2 (PKCS#11), UV_THREADPOOL_SIZE=${size}`,
        keysFile: file,
        env: { ...token.env, UV_THREADPOOL_SIZE: String(size) },
      });
    }
  } else if (asked.has('pkcs11')) skipped.push(`SoftHSM2: ${noHsm}`);
  const kms = findLocalKms();
  if (asked.has('kms') && 'localKms' in kms) {
    const port = await freePort();
    const server = await startLocalKms(kms.localKms, port, join(dir, 'kms'));
    stop = async () => {
      server.kill();
      await server.closed;
    };
    const file = join(dir, 'kms.json');
    const made = await runCli(['keys', 'generate', '--alg', 'ES256', '--kms', 'alias/bench-es256', '--out', file], { env: kmsEnv(port) });
    if (made.code !== 0) {
      await stop();
      throw new Error(made.stderr);
    }
    sources.push({ name: 'local-kms (AWS KMS API)', keysFile: file, env: kmsEnv(port) });
  } else if (asked.has('kms')) skipped.push(`local-kms: ${'skip' in kms ? kms.skip : ''}`);
  for (const line of skipped) log(`rows skipped: ${line}`);
  return { sources, skipped, stop };
}

/**
 * Measures ES256 GenerateJwt with the key in memory and in each backend asked for, in
 * interleaved rounds (`npm run bench -- --features pkcs11,kms` puts them in results.json's
 * `macro.keyBackends` and summary.md; `npm run bench:key-backends` prints the table).
 */
export async function measureKeyBackends(options: KeyBackendsOptions): Promise<KeyBackendResults> {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bench-keys-'));
  try {
    const { sources, skipped, stop } = await prepareSources(options, dir);
    try {
      const rows = await interleaved(options, sources);
      return {
        durationS: options.durationS,
        rounds: options.rounds,
        serverCpus: options.serverCpus,
        cells: keyBackendCells(
          rows,
          sources.map((source) => source.name),
          options.levels,
        ),
        skipped,
      };
    } finally {
      await stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The summary.md section: one row per key source and level, the handle's ratio to in memory beside it. */
export function keyBackendsSection(results: KeyBackendResults): string {
  const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '—');
  return [
    `ES256 GenerateJwt through \`jwt-grpc serve\` (\`--no-jti\`) on CPU ${results.serverCpus.join(',') || 'any'}, ghz over 1 connection; ` +
      `${results.rounds} interleaved round(s) of ${results.durationS} s a cell, medians of the rounds; × in memory: the median of each round's ratio to the in-memory key's same round. ` +
      'Server CPU includes the threads SoftHSM2 signs on (it is a library inside the process).',
    markdownTable(
      ['key', 'in flight', 'calls/s', '× in memory', 'server CPU µs/call', 'p99 ms', 'errors'],
      results.cells.map((cell) => [
        cell.source,
        String(cell.concurrency),
        fixed(cell.callsPerSecond, 0),
        fixed(cell.ratioToMemory, 2),
        fixed(cell.cpuMicrosPerCall, 0),
        fixed(cell.p99Ms, 2),
        String(cell.errors),
      ]),
    ),
    ...results.skipped.map((line) => `- Skipped: ${line}`),
  ].join('\n\n');
}

// Run as a script: `npm run bench:key-backends -- [--duration 5] [--rounds 3] [--concurrency 1,8,64] [--sources memory,pkcs11,kms] [--pkcs11-threadpool 1]`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '1,8,64' },
      sources: { type: 'string', default: 'memory,pkcs11,kms' },
      // Extra SoftHSM2 rows with a smaller libuv thread pool, e.g. `1,2`: what the pool's threads cost on one core.
      'pkcs11-threadpool': { type: 'string', default: '' },
    },
  });
  const log = (line: string): void => void process.stderr.write(`key-backends: ${line}\n`);
  const results = await measureKeyBackends({
    ghz: ensureGoTool(GO_TOOLS.ghz, log),
    sources: new Set(String(values.sources).split(',')),
    durationS: Number(values.duration),
    rounds: Number(values.rounds),
    levels: String(values.concurrency).split(',').map(Number),
    serverCpus: [0],
    pkcs11ThreadPools: String(values['pkcs11-threadpool'])
      .split(',')
      .filter((size) => size !== '')
      .map(Number),
    log,
  });
  process.stdout.write(`${keyBackendsSection(results)}\n`);
}
