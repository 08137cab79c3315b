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
import { registerCleanup } from '../common/cleanup.js';
import type { Transport } from '../../src/lib.js';
import { optionValue } from '../../src/options/resolve.js';
import { TRANSPORTS } from '../../src/options/table.js';
import { type ParsedCommandLine, parseChoice, parseChoices, parseFlags, parseNumber, runProgram } from '../common/program.js';
import { GO_TOOLS, ensureGoTool } from '../kit/tools.js';
import { planCores } from '../harness/cores.js';
import { writeKeysFile } from '../harness/keys-file.js';
import { killAll } from '../kit/launcher.js';
import { LOAD_SCENARIOS, type LoadCellResult, RSS_GROWTH_LIMIT, formatLoadCell, runLoadCell } from './load-cell.js';

const CELL_NAMES = LOAD_SCENARIOS.map((c) => c.name);
/** The CLI's own default transport. */
const DEFAULT_TRANSPORT: Transport = optionValue('transport', undefined);

const HELP = `Usage: npm run soak -- [options]      (or: node dist/bench/soak/run.js [options])

Runs each reliability load cell (${CELL_NAMES.join(', ')}; GenerateJwt HS256 on loopback)
against a fresh single-process jwt-grpc for the given time, after a warm-up run, and
checks: zero non-OK responses, server RSS after the run within ${RSS_GROWTH_LIMIT * 100} % of its RSS after the warm-up.

  --minutes N          minutes per cell (default 10; fractions allowed, e.g. 0.5)
  --warmup-seconds S   seconds of one warm-up round (default 20); rounds repeat, 2 to 5,
                       until the server's RSS stops growing
  --cells a,b          only these cells (default: all)
  --transport T        the server's gRPC transport: ${TRANSPORTS.join(' or ')} (default ${DEFAULT_TRANSPORT})
  -h, --help           this text

Exit status: 0 all checks passed, 1 a check failed, 2 bad option.
`;

interface SoakOptions {
  readonly minutes: number;
  readonly warmupS: number;
  readonly cells: readonly string[];
  readonly transport: Transport;
}

function parseSoakCommandLine(argv: readonly string[]): ParsedCommandLine<SoakOptions> {
  const values = parseFlags(argv, {
    minutes: { type: 'string' },
    'warmup-seconds': { type: 'string' },
    cells: { type: 'string' },
    transport: { type: 'string' },
  });
  if (values === 'help') return { kind: 'help' };
  const minutes = parseNumber('--minutes', values.minutes ?? '10', 0.01, 24 * 60);
  const warmupS = parseNumber('--warmup-seconds', values['warmup-seconds'] ?? '20', 1, 3600);
  const cells = values.cells === undefined ? CELL_NAMES : parseChoices('--cells', values.cells, CELL_NAMES);
  const transport = parseChoice('--transport', values.transport ?? DEFAULT_TRANSPORT, TRANSPORTS);
  return { kind: 'run', options: { minutes, warmupS, cells, transport } };
}

async function soak(options: SoakOptions): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`soak: ${line}\n`);
  const plan = planCores(1);
  for (const note of plan.notes) log(note);
  log(plan.pinned ? `server pinned to CPU ${plan.single.serverCpus.join(',')}, ghz to CPU ${plan.single.loadCpus.join(',')}` : 'not pinned');
  const ghz = ensureGoTool(GO_TOOLS.ghz, log);
  const keys = writeKeysFile(['HS256']);
  const workDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-soak-'));
  const cleanup = (): void => {
    void killAll();
    keys.remove();
    rmSync(workDir, { recursive: true, force: true });
  };
  const unregister = registerCleanup(cleanup);

  const results: LoadCellResult[] = [];
  try {
    for (const scenario of LOAD_SCENARIOS.filter((c) => options.cells.includes(c.name))) {
      log(`cell ${scenario.name}: ${scenario.connections} connection(s), ${scenario.concurrency} in flight, ${options.minutes} min after warm-up rounds of ${options.warmupS} s`);
      const result = await runLoadCell({
        scenario,
        transport: options.transport,
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
    unregister();
    cleanup();
  }

  const failed = results.filter((r) => r.failures.length > 0);
  process.stdout.write(
    [
      `soak: ${options.transport} transport, ${options.minutes} min per cell, warm-up rounds of ${options.warmupS} s, ${plan.pinned ? 'server on CPU ' + plan.single.serverCpus.join(',') + ', ghz on CPU ' + plan.single.loadCpus.join(',') : 'unpinned'}`,
      ...results.map(formatLoadCell),
      failed.length === 0 ? 'soak: PASS' : `soak: FAIL (${failed.map((r) => r.scenario.name).join(', ')})`,
      '',
    ].join('\n'),
  );
  return failed.length === 0 ? 0 : 1;
}

await runProgram({ name: 'soak', url: import.meta.url, help: () => HELP, parse: parseSoakCommandLine, run: soak });
