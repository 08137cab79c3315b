/**
 * `npm run soak [-- --minutes N]`: the long form of test/reliability/load.test.ts. Each
 * load cell (1 connection x 1,000 in flight, 500 x 1,000; GenerateJwt HS256) runs for
 * N minutes (default 10) against a fresh single-process server pinned to CPU 0, ghz
 * pinned to CPU 1, after a warm-up run. Prints calls, errors and the server's RSS after
 * the warm-up and after the soak, and exits 1 if any check fails: any non-OK response,
 * or RSS growth over 20 %. Loopback only; every run is bounded by its duration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { planCores } from '../ghz/cores.js';
import { locateGhz } from '../ghz/ghz-binary.js';
import { writeKeysFile } from '../ghz/keys-file.js';
import { killAllCliServers } from './cli-server.js';
import { LOAD_CELLS, type LoadCellResult, RSS_GROWTH_LIMIT, formatLoadCell, runLoadCell } from './load-cell.js';

const HELP = `Usage: npm run soak -- [options]      (or: node dist/bench/soak/run.js [options])

Runs each reliability load cell (${LOAD_CELLS.map((c) => c.name).join(', ')}; GenerateJwt HS256 on loopback)
against a fresh single-process jwt-grpc for the given time, after a warm-up run, and
checks: zero non-OK responses, server RSS after the run within ${RSS_GROWTH_LIMIT * 100} % of its RSS after the warm-up.

  --minutes N          minutes per cell (default 10; fractions allowed, e.g. 0.5)
  --warmup-seconds S   seconds of one warm-up round (default 20); rounds repeat, 2 to 5,
                       until the server's RSS stops growing
  --cells a,b          only these cells (default: all)
  -h, --help           this text

Exit status: 0 all checks passed, 1 a check failed, 2 bad option.
`;

interface SoakOptions {
  readonly minutes: number;
  readonly warmupS: number;
  readonly cells: readonly string[];
}

function parseOptions(argv: readonly string[]): SoakOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string' },
      'warmup-seconds': { type: 'string' },
      cells: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help === true) return 'help';
  const minutes = Number(values.minutes ?? '10');
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60) throw new Error(`--minutes must be a number from 0 to 1440, got ${values.minutes}`);
  const warmupS = Number(values['warmup-seconds'] ?? '20');
  if (!Number.isFinite(warmupS) || warmupS < 1 || warmupS > 3600) throw new Error(`--warmup-seconds must be from 1 to 3600, got ${values['warmup-seconds']}`);
  const names = LOAD_CELLS.map((c) => c.name);
  const cells = values.cells === undefined ? names : values.cells.split(',').map((c) => c.trim());
  for (const cell of cells) if (!names.includes(cell)) throw new Error(`--cells: unknown cell ${cell} (cells: ${names.join(', ')})`);
  return { minutes, warmupS, cells };
}

async function main(): Promise<number> {
  let options: SoakOptions | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`soak: ${(err as Error).message}\n${HELP}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const log = (line: string): void => void process.stderr.write(`soak: ${line}\n`);
  const plan = planCores(1);
  for (const note of plan.notes) log(note);
  log(plan.pinned ? `server pinned to CPU ${plan.single.serverCpus.join(',')}, ghz to CPU ${plan.single.loadCpus.join(',')}` : 'not pinned');
  const ghz = locateGhz(log);
  const keys = writeKeysFile(['HS256']);
  const workDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-soak-'));
  const cleanup = (): void => {
    killAllCliServers();
    keys.remove();
    rmSync(workDir, { recursive: true, force: true });
  };
  const onSignal = (): void => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const results: LoadCellResult[] = [];
  try {
    for (const cell of LOAD_CELLS.filter((c) => options.cells.includes(c.name))) {
      log(`cell ${cell.name}: ${cell.connections} connection(s), ${cell.concurrency} in flight, ${options.minutes} min after warm-up rounds of ${options.warmupS} s`);
      const result = await runLoadCell({
        cell,
        ghz,
        plan,
        keysFile: keys.path,
        warmupRoundS: options.warmupS,
        warmupRounds: { min: 2, max: 5 },
        durationS: Math.round(options.minutes * 60),
        workDir,
        log,
      });
      results.push(result);
      log(formatLoadCell(result));
    }
  } finally {
    cleanup();
  }

  const failed = results.filter((r) => r.failures.length > 0);
  process.stdout.write(
    [
      `soak: ${options.minutes} min per cell, warm-up rounds of ${options.warmupS} s, ${plan.pinned ? 'server on CPU ' + plan.single.serverCpus.join(',') + ', ghz on CPU ' + plan.single.loadCpus.join(',') : 'unpinned'}`,
      ...results.map(formatLoadCell),
      failed.length === 0 ? 'soak: PASS' : `soak: FAIL (${failed.map((r) => r.cell.name).join(', ')})`,
      '',
    ].join('\n'),
  );
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    killAllCliServers();
    process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
