/**
 * `npm run bench:key-backends`: ES256 GenerateJwt through `jwt-grpc serve` (one process,
 * pinned to one core when taskset is there) with the key in memory, in SoftHSM2
 * (PKCS#11) and in local-kms (AWS KMS), driven by ghz at 1, 8 and 64 calls in flight.
 * Per row: calls a second, the server's CPU per call (/proc, the whole process), and p99
 * latency. A short run on whatever machine runs it: on a shared one, repeat it and read
 * the ratio rather than the absolute numbers.
 *
 *   npm run bench:key-backends -- [--duration 5] [--concurrency 1,8,64]
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
import { PROTO_PATH } from '../../src/package-root.js';

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
  readonly log: (line: string) => void;
}

/** One ghz run against `port`; the server's CPU seconds over it, read from /proc. */
async function measure(ghz: string, server: CliServer, source: string, concurrency: number, durationS: number, log: (line: string) => void): Promise<KeyBackendRow> {
  const args = [
    '--insecure', '--proto', PROTO_PATH, '--call', 'jwt.services.JwtService.GenerateJwt',
    '-d', '{"subject":"ada@example.com","algorithm":"ES256"}',
    '-c', String(concurrency), '--connections', '1', '-z', `${durationS}s`, '--format', 'json', `127.0.0.1:${server.port}`,
  ];
  // Warm-up: the first calls open sessions and JIT-compile.
  // Asynchronous: a blocked event loop would stop reading local-kms's log pipe, and local-kms would stall writing to it.
  await runToExit(ghz, [...args.slice(0, -5), '-n', String(200 * concurrency), '--format', 'json', `127.0.0.1:${server.port}`], { timeoutMs: 60_000 });
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
  const cut = Object.entries(report.errorDistribution ?? {}).filter(([message]) => /closed network connection|transport is closing/.test(message)).reduce((sum, [, count]) => sum + count, 0);
  const failures = Object.keys(report.errorDistribution ?? {}).filter((message) => !/closed network connection|transport is closing/.test(message));
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

async function serveRows(options: KeyBackendsOptions, source: string, keysFile: string, env: Record<string, string>): Promise<KeyBackendRow[]> {
  const { ghz, levels, durationS, log } = options;
  const server = await startCli(serveArgs('--keys', keysFile, '--no-jti'), { env, cpus: [0] });
  try {
    const rows: KeyBackendRow[] = [];
    for (const concurrency of levels) {
      const row = await measure(ghz, server, source, concurrency, durationS, log);
      log(`${source} c=${concurrency}: ${row.callsPerSecond.toFixed(0)}/s, ${row.cpuMicrosPerCall.toFixed(0)} µs CPU/call, p99 ${row.p99Ms.toFixed(2)} ms`);
      rows.push(row);
    }
    return rows;
  } finally {
    server.signal('SIGTERM');
    await server.closed;
  }
}

/**
 * Runs the cells and returns the rows and their Markdown table (`npm run bench -- --features
 * pkcs11,kms` appends it to summary.md; `npm run bench:key-backends` prints it).
 */
export async function measureKeyBackends(options: KeyBackendsOptions): Promise<{ rows: KeyBackendRow[]; table: string }> {
  const { sources, log, durationS } = options;
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bench-keys-'));
  const rows: KeyBackendRow[] = [];
  try {
    const memoryFile = join(dir, 'memory.json');
    await runCli(['keys', 'generate', '--alg', 'ES256', '--out', memoryFile]);
    rows.push(...(await serveRows(options, 'in memory', memoryFile, {})));

    const noHsm = softhsmMissing();
    if (!sources.has('pkcs11')) log('SoftHSM2 rows not asked for');
    else if (noHsm === undefined) {
      const token = softToken(join(dir, 'hsm'));
      const file = join(dir, 'pkcs11.json');
      const made = await runCli(['keys', 'generate', '--alg', 'ES256', '--pkcs11', token.uri('bench-es256'), '--out', file], { env: token.env });
      if (made.code !== 0) throw new Error(made.stderr);
      rows.push(...(await serveRows(options, 'SoftHSM2 (PKCS#11)', file, token.env)));
    } else log(`SoftHSM2 rows skipped: ${noHsm}`);

    const kms = findLocalKms();
    if (!sources.has('kms')) log('local-kms rows not asked for');
    else if ('localKms' in kms) {
      const port = await freePort();
      const server = await startLocalKms(kms.localKms, port, join(dir, 'kms'));
      try {
        const file = join(dir, 'kms.json');
        const made = await runCli(['keys', 'generate', '--alg', 'ES256', '--kms', 'alias/bench-es256', '--out', file], { env: kmsEnv(port) });
        if (made.code !== 0) throw new Error(made.stderr);
        rows.push(...(await serveRows(options, 'local-kms (AWS KMS API)', file, kmsEnv(port))));
      } finally {
        server.kill();
        await server.closed;
      }
    } else log(`local-kms rows skipped: ${kms.skip}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const memory = new Map(rows.filter((row) => row.source === 'in memory').map((row) => [row.concurrency, row.callsPerSecond]));
  const lines = [
    `ES256 GenerateJwt, jwt-grpc serve on one core, ghz 1 connection, ${durationS} s a cell (short run; shared machines are noisy)`,
    '',
    '| key | in flight | calls/s | × in memory | server CPU µs/call | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) =>
      `| ${row.source} | ${row.concurrency} | ${row.callsPerSecond.toFixed(0)} | ${(row.callsPerSecond / (memory.get(row.concurrency) ?? Number.NaN)).toFixed(2)} | ${row.cpuMicrosPerCall.toFixed(0)} | ${row.p99Ms.toFixed(2)} | ${row.errors} |`,
    ),
  ];
  return { rows, table: lines.join('\n') };
}

// Run as a script: `npm run bench:key-backends -- [--duration 5] [--concurrency 1,8,64] [--sources memory,pkcs11,kms]`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { duration: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '1,8,64' }, sources: { type: 'string', default: 'memory,pkcs11,kms' } },
  });
  const log = (line: string): void => void process.stderr.write(`key-backends: ${line}\n`);
  const { table } = await measureKeyBackends({
    ghz: ensureGoTool(GO_TOOLS.ghz, log),
    sources: new Set(String(values.sources).split(',')),
    durationS: Number(values.duration),
    levels: String(values.concurrency).split(',').map(Number),
    log,
  });
  process.stdout.write(`${table}\n`);
}
