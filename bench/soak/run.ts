/**
 * `npm run soak [-- --minutes N]`: the long form of test/reliability/soak.load.test.ts. Each
 * load cell (1 connection x 1,000 in flight, 500 x 1,000; GenerateJwt HS256) runs for
 * N minutes (default 10), as rounds of equal length, against a fresh single-process
 * server pinned to CPU 0, ghz pinned to CPU 1. Prints calls, errors and the server's RSS
 * after each round (after a full GC) and how it grows over the second half of them, and
 * exits 1 if any check fails: any non-OK response, or RSS still growing (a median growth
 * over {@link GROWTH_LIMIT_MIB} MiB per round). Loopback only; every run is bounded by its duration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerCleanup } from '../kit/cleanup.js';
import type { Transport } from '../../src/lib/index.js';
import { optionValue } from '../../src/options/resolve.js';
import { TRANSPORTS } from '../../src/options/table.js';
import { type ParsedCommandLine, parseChoice, parseChoices, parseFlags, parseNumber, runProgram } from '../kit/program.js';
import { GO_TOOLS, ensureGoTool } from '../kit/tools.js';
import { planCores } from '../harness/cores.js';
import { writeKeysFile } from '../harness/keys-file.js';
import { killAll } from '../kit/launcher.js';
import { LOAD_SCENARIOS, type LoadCellResult, GROWTH_LIMIT_MIB, formatLoadCell, runLoadCell } from './load-cell.js';

const CELL_NAMES = LOAD_SCENARIOS.map((c) => c.name);
/** The CLI's own default transport. */
const DEFAULT_TRANSPORT: Transport = optionValue('transport', undefined);

const HELP = `Usage: npm run soak -- [options]      (or: node dist/bench/soak/run.js [options])

Runs each reliability load cell (${CELL_NAMES.join(', ')}; GenerateJwt HS256 on loopback)
against a fresh single-process jwt-grpc for the given time, as rounds of equal length,
reads the server's RSS after a full GC after each round, and checks: zero non-OK
responses, and RSS levelled off: over the second half of the readings, the median growth
from one round to the next at most ${GROWTH_LIMIT_MIB} MiB (growth that goes on round after
round is a leak; a step when a round reaches a new call rate is the allocator).

  --minutes N          minutes per cell (default 10; fractions allowed, e.g. 0.5)
  --round-seconds S    seconds of one round (default 30; at least 4 rounds are run)
  --cells a,b          only these cells (default: all)
  --transport T        the server's gRPC transport: ${TRANSPORTS.join(' or ')} (default ${DEFAULT_TRANSPORT})
  -h, --help           this text

Exit status: 0 all checks passed, 1 a check failed, 2 bad option.
`;

interface SoakOptions {
  readonly minutes: number;
  readonly roundS: number;
  readonly cells: readonly string[];
  readonly transport: Transport;
}

function parseSoakCommandLine(argv: readonly string[]): ParsedCommandLine<SoakOptions> {
  const values = parseFlags(argv, {
    minutes: { type: 'string' },
    'round-seconds': { type: 'string' },
    cells: { type: 'string' },
    transport: { type: 'string' },
  });
  if (values === 'help') return { kind: 'help' };
  const minutes = parseNumber('--minutes', values.minutes ?? '10', 0.01, 24 * 60);
  const roundS = parseNumber('--round-seconds', values['round-seconds'] ?? '30', 1, 3600);
  const cells = values.cells === undefined ? CELL_NAMES : parseChoices('--cells', values.cells, CELL_NAMES);
  const transport = parseChoice('--transport', values.transport ?? DEFAULT_TRANSPORT, TRANSPORTS);
  return { kind: 'run', options: { minutes, roundS, cells, transport } };
}

async function soak(options: SoakOptions): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`soak: ${line}\n`);
  const plan = planCores(1);
  for (const note of plan.notes) log(note);
  log(
    plan.pinned ? `server pinned to CPU ${plan.single.serverCpus.join(',')}, ghz to CPU ${plan.single.loadCpus.join(',')}` : 'not pinned',
  );
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
    // At least 4 rounds; the second half of them (3 readings at least) is judged, the first is the warm-up.
    const rounds = Math.max(4, Math.round((options.minutes * 60) / options.roundS));
    for (const scenario of LOAD_SCENARIOS.filter((c) => options.cells.includes(c.name))) {
      log(
        `cell ${scenario.name}: ${scenario.connections} connection(s), ${scenario.concurrency} in flight, ${rounds} rounds of ${options.roundS} s`,
      );
      const result = await runLoadCell({
        scenario,
        transport: options.transport,
        ghz,
        plan,
        keysFile: keys.path,
        roundS: options.roundS,
        rounds,
        judgedRounds: Math.max(3, Math.floor(rounds / 2)),
        growthLimitMiB: GROWTH_LIMIT_MIB,
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
      `soak: ${options.transport} transport, ${options.minutes} min per cell in rounds of ${options.roundS} s, ${plan.pinned ? 'server on CPU ' + plan.single.serverCpus.join(',') + ', ghz on CPU ' + plan.single.loadCpus.join(',') : 'unpinned'}`,
      ...results.map(formatLoadCell),
      failed.length === 0 ? 'soak: PASS' : `soak: FAIL (${failed.map((r) => r.scenario.name).join(', ')})`,
      '',
    ].join('\n'),
  );
  return failed.length === 0 ? 0 : 1;
}

await runProgram({ name: 'soak', url: import.meta.url, help: () => HELP, parse: parseSoakCommandLine, run: soak });
