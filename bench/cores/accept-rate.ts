/**
 * `npm run bench:accept`: how fast new connections reach node:cluster's workers when the
 * primary accepts them and hands them over round-robin (node:cluster's default), when the
 * workers accept on their own through SO_REUSEPORT (`reusePort: true`), and through
 * jwt-grpc's own primary (`hand-off`, what a jwt-grpc cluster runs). The
 * server (primary + workers) runs pinned on the server CPUs of bench/harness/cores.ts's
 * plan, the client on the others, as in the macro benchmark; rounds alternate the modes.
 * What it bounds and what it does not: docs/benchmarks.md, "Many cores".
 */
import { join } from 'node:path';
import { repoPath } from '../kit/paths.js';
import { type ParsedCommandLine, parseFlags, parseInteger, runProgram } from '../kit/program.js';
import { median } from '../common/stats.js';
import { planCores } from '../harness/cores.js';
import { tasksetCommand } from '../kit/exec.js';
import { runToExit, startServer } from '../kit/launcher.js';
import { cpuSeconds, treeCpuSeconds } from '../kit/proc.js';
import { ACCEPT_MODES, type AcceptMode } from './modes.js';

interface AcceptOptions {
  readonly serverCores: number | null;
  readonly workers: number | null;
  readonly seconds: number;
  readonly rounds: number;
  readonly connections: number;
}

/** One mode in one round. */
export interface AcceptRound {
  readonly mode: AcceptMode;
  readonly round: number;
  readonly connectionsPerSecond: number;
  /** Connections each worker answered. */
  readonly perWorker: readonly number[];
  readonly errors: Readonly<Record<string, number>>;
  /** CPU µs per connection: the primary's own, and the whole server tree's. */
  readonly primaryCpuUsPerConnection: number;
  readonly serverCpuUsPerConnection: number;
  /** Of W connections opened at once (W = workers), the share of tries that reached every worker. */
  readonly evenShare: number;
}

const HELP = `Usage: npm run bench:accept -- [options]

New TCP connections per second through node:cluster's primary (round-robin), with
reusePort workers, and through jwt-grpc's own primary (hand-off: src/cluster/dispatcher.ts),
server and client pinned apart.

  --server-cores N   CPUs of the server (default: as the macro benchmark's N-core group)
  --workers N        cluster workers (default: N, or 2 when N = 1)
  --seconds S        length of each measurement (default 5)
  --rounds R         rounds, each measuring every mode (default 3)
  --connections C    connections the client keeps opening at once (default 32)
  -h, --help         this text
`;

export function parseAcceptCommandLine(argv: readonly string[]): ParsedCommandLine<AcceptOptions> {
  const flags = parseFlags(argv, {
    'server-cores': { type: 'string' },
    workers: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
  });
  if (flags === 'help') return { kind: 'help' };
  const optional = (name: string, raw: string | undefined, min: number, max: number): number | null =>
    raw === undefined ? null : parseInteger(name, raw, min, max);
  return {
    kind: 'run',
    options: {
      serverCores: optional('--server-cores', flags['server-cores'], 1, 1024),
      workers: optional('--workers', flags.workers, 1, 255),
      seconds: optional('--seconds', flags.seconds, 1, 600) ?? 5,
      rounds: optional('--rounds', flags.rounds, 1, 100) ?? 3,
      connections: optional('--connections', flags.connections, 1, 4096) ?? 32,
    },
  };
}

async function measure(
  mode: AcceptMode,
  round: number,
  options: AcceptOptions,
  split: { serverCpus: readonly number[]; loadCpus: readonly number[]; workers: number },
  pinned: boolean,
): Promise<AcceptRound> {
  const pin = (cpus: readonly number[]): readonly number[] => (pinned ? cpus : []);
  const server = tasksetCommand(pin(split.serverCpus), process.execPath, [
    repoPath('dist', 'bench', 'cores', 'accept-server.js'),
    mode,
    String(split.workers),
  ]);
  const started = await startServer(`accept-server ${mode}`, server.command, server.args);
  try {
    const primaryBefore = cpuSeconds(started.pid) ?? 0;
    const treeBefore = treeCpuSeconds(started.pid);
    const client = tasksetCommand(pin(split.loadCpus), process.execPath, [
      join(repoPath('dist', 'bench', 'cores'), 'accept-client.js'),
      String(started.port),
      String(options.connections),
      String(options.seconds),
      String(split.workers),
    ]);
    const run = await runToExit(client.command, client.args, { timeoutMs: (options.seconds + 30) * 1000 });
    if (run.code !== 0) throw new Error(`accept-client failed (${run.code}): ${run.stderr.trim()}`);
    // CPU over the timed part and the spread probe after it; the probe's 200 x W connections add a few per cent.
    const primaryUs = ((cpuSeconds(started.pid) ?? 0) - primaryBefore) * 1e6;
    const treeUs = (treeCpuSeconds(started.pid) - treeBefore) * 1e6;
    const result = JSON.parse(run.stdout) as {
      completed: number;
      elapsedS: number;
      perWorker: number[];
      errors: Record<string, number>;
      evenShare: number;
    };
    const perWorker = Array.from({ length: split.workers }, (_, i) => result.perWorker[i] ?? 0);
    return {
      mode,
      round,
      connectionsPerSecond: result.completed / result.elapsedS,
      perWorker,
      errors: result.errors,
      primaryCpuUsPerConnection: primaryUs / Math.max(1, result.completed),
      serverCpuUsPerConnection: treeUs / Math.max(1, result.completed),
      evenShare: result.evenShare,
    };
  } finally {
    await started.stop(5000);
  }
}

/** The busiest worker's share over the idlest's: 1.00 is even. */
function imbalance(perWorker: readonly number[]): number {
  const least = Math.min(...perWorker);
  return least === 0 ? Number.POSITIVE_INFINITY : Math.max(...perWorker) / least;
}

export async function runAcceptRate(options: AcceptOptions, log: (line: string) => void): Promise<AcceptRound[]> {
  const plan = planCores(options.serverCores);
  const group = plan.multi[0];
  if (group === undefined) throw new Error('no core plan');
  const split = { serverCpus: group.serverCpus, loadCpus: group.loadCpus, workers: options.workers ?? group.workers };
  for (const note of plan.notes) log(`note: ${note}`);
  log(
    `server (primary + ${split.workers} workers) on CPUs ${split.serverCpus.join(',')}, client on ${split.loadCpus.join(',')}${plan.pinned ? '' : ' (not pinned)'}`,
  );
  const rounds: AcceptRound[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    // Alternate which mode goes first, so that neither always follows the other.
    const order = round % 2 === 1 ? ACCEPT_MODES : [...ACCEPT_MODES].reverse();
    for (const mode of order) {
      const result = await measure(mode, round, options, split, plan.pinned);
      log(`round ${round} ${mode}: ${Math.round(result.connectionsPerSecond)} connections/s, per worker ${result.perWorker.join('/')}`);
      rounds.push(result);
    }
  }
  return rounds;
}

export function acceptTable(rounds: readonly AcceptRound[]): string {
  const lines = [
    '| mode | connections/s, median (min-max) | primary CPU µs/conn | server CPU µs/conn | busiest / idlest worker | W at once reach W workers | errors |',
    '| :--- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const mode of ACCEPT_MODES) {
    const own = rounds.filter((r) => r.mode === mode);
    if (own.length === 0) continue;
    const rates = own.map((r) => r.connectionsPerSecond);
    const errors = own.reduce((sum, r) => sum + Object.values(r.errors).reduce((a, b) => a + b, 0), 0);
    const totals = own[0]?.perWorker.map((_, i) => own.reduce((sum, r) => sum + (r.perWorker[i] ?? 0), 0)) ?? [];
    lines.push(
      `| ${mode} | ${Math.round(median(rates))} (${Math.round(Math.min(...rates))}-${Math.round(Math.max(...rates))}) | ` +
        `${median(own.map((r) => r.primaryCpuUsPerConnection)).toFixed(1)} | ${median(own.map((r) => r.serverCpuUsPerConnection)).toFixed(1)} | ` +
        `${imbalance(totals).toFixed(2)} | ${Math.round(median(own.map((r) => r.evenShare)) * 100)} % | ${errors} |`,
    );
  }
  return lines.join('\n') + '\n';
}

await runProgram({
  name: 'bench:accept',
  url: import.meta.url,
  help: () => HELP,
  parse: parseAcceptCommandLine,
  run: async (options) => {
    const rounds = await runAcceptRate(options, (line) => process.stderr.write(`bench:accept: ${line}\n`));
    process.stdout.write(acceptTable(rounds));
    return 0;
  },
});
