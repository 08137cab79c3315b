/**
 * `npm run bench:attack [-- options]`: each attack of attackers.ts against a fresh server, on
 * each transport, single and in a cluster of two, while a legitimate caller calls every
 * 200 ms; the measure of success is the legitimate caller's, judged in verdict.ts. Writes
 * results.json and summary.md under bench/results/attack/<time>/ and prints the table.
 * Loopback only: the attacker's address is in 127.0.0.0/8 and every run is bounded.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Transport } from '../../src/lib/index.js';
import { TRANSPORTS } from '../../src/options/table.js';
import { createRunDir, updateLatestLink } from '../common/results-dir.js';
import { machineInfo } from '../common/machine.js';
import { formatMiB } from '../common/format.js';
import { writeKeysFile } from '../harness/keys-file.js';
import { planCores } from '../harness/cores.js';
import { registerCleanup } from '../kit/cleanup.js';
import { killAll } from '../kit/launcher.js';
import { DEFAULT_RESULTS_DIR } from '../kit/paths.js';
import { type ParsedCommandLine, UsageError, parseChoices, parseFlags, parseNumber, runProgram } from '../kit/program.js';
import { ATTACKS, ATTACK_DESCRIPTIONS, type AttackName } from './attackers.js';
import { type CellResult, type CellSpec, SERVER_OPEN_FILES, runCell } from './cell.js';
import { type FloodCredentials, floodSpec, makeFloodCredentials } from './mtls.js';
import { type CallSummary, MAX_P99_MS, MIN_SUCCESS, judgeCell } from './verdict.js';

const HELP = `Usage: npm run bench:attack -- [options]     (or: node dist/bench/attack/run.js [options])

Runs each attack against a fresh jwt-grpc serve (open-files limit ${SERVER_OPEN_FILES}) while a
legitimate caller makes one GenerateJwt every 200 ms on a fresh channel and one on a
long-lived channel (and fetches the JWK Set and /metrics, each on a new connection), and
judges the caller: at least ${MIN_SUCCESS * 100} % OK at p99 under ${MAX_P99_MS} ms. The attacks:
${ATTACKS.map((name) => `  ${name.padEnd(10)} ${ATTACK_DESCRIPTIONS[name]}`).join('\n')}

  --attacks a,b       only these (default: all)
  --transports a,b    ${TRANSPORTS.join(', ')} (default: both)
  --workers 1,2       a single process, a cluster of two, or both (default: both)
  --seconds N         attack time per cell (default 30)
  --from ADDRESS      the attacker's source address, in 127.0.0.0/8 (default 127.0.0.2)
  --spread N          the attacker spreads its connections over N addresses from --from up
                      (default 1): an attacker with many addresses, whom no per-address share stops
  -h, --help          this text

Exit status: 0 every cell met its targets, 1 one did not, 2 bad option.
`;

interface AttackOptions {
  readonly attacks: readonly AttackName[];
  readonly transports: readonly Transport[];
  readonly workers: readonly (1 | 2)[];
  readonly seconds: number;
  readonly from: string;
  readonly spread: number;
}

function parse(argv: readonly string[]): ParsedCommandLine<AttackOptions> {
  const values = parseFlags(argv, {
    attacks: { type: 'string' },
    transports: { type: 'string' },
    workers: { type: 'string' },
    seconds: { type: 'string' },
    from: { type: 'string' },
    spread: { type: 'string' },
  });
  if (values === 'help') return { kind: 'help' };
  const from = values.from ?? '127.0.0.2';
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(from)) throw new UsageError(`--from: "${from}" is not a loopback address (127.x.y.z)`);
  return {
    kind: 'run',
    options: {
      attacks: values.attacks === undefined ? ATTACKS : parseChoices('--attacks', values.attacks, ATTACKS),
      transports: values.transports === undefined ? TRANSPORTS : parseChoices('--transports', values.transports, TRANSPORTS),
      workers: (values.workers === undefined ? ['1', '2'] : parseChoices('--workers', values.workers, ['1', '2'])).map(Number) as (1 | 2)[],
      seconds: parseNumber('--seconds', values.seconds ?? '30', 1, 3600),
      from,
      spread: parseNumber('--spread', values.spread ?? '1', 1, 250),
    },
  };
}

const percent = (summary: CallSummary): string =>
  summary.calls === 0 ? 'n/a' : `${(summary.successRate * 100).toFixed(1)} % (p99 ${Math.round(summary.p99Ms)} ms)`;

function tableRow(result: CellResult): string {
  const { calls, missed } = judgeCell(result);
  const { attack, transport, workers } = result.spec;
  const a = result.attacker;
  const rss = `${formatMiB(result.rss.warm)} / ${formatMiB(result.rss.peak)}${result.rss.settled === undefined ? '' : ` / ${formatMiB(result.rss.settled)}`}`;
  const attacker = a === undefined ? 'n/a' : `${a.opened} / ${a.closedByServer} / ${a.failedToOpen}; ${a.streams} / ${a.streamsRefused}`;
  const verdict = missed.length === 0 ? 'met' : `**missed**: ${missed.join('; ')}`;
  return `| ${attack} | ${transport} | ${workers} | ${percent(calls.fresh)} | ${percent(calls.longLived)} | ${percent(calls.discovery)} | ${percent(calls.metrics)} | ${rss} | ${attacker} | ${verdict} |`;
}

function summary(results: readonly CellResult[], options: AttackOptions, started: Date): string {
  const machine = machineInfo();
  return [
    `# Attacks, ${started.toISOString()}`,
    '',
    `${machine.cpuModel}, ${machine.logicalCpus} CPUs; Node ${process.versions.node}. Attacker from ${options.spread === 1 ? options.from : `${options.spread} addresses from ${options.from} up`}, ${options.seconds} s per cell; server open-files limit ${SERVER_OPEN_FILES}.`,
    `Targets: legitimate calls at least ${MIN_SUCCESS * 100} % OK at p99 under ${MAX_P99_MS} ms; under churn, peak RSS at most 1.5x the RSS after warm-up, back within 10 % 30 s after.`,
    '',
    '| attack | transport | processes | fresh channel | long-lived channel | discovery | metrics | RSS warm / peak (/ 30 s after) | attacker: connections opened / closed by server / refused; streams opened / refused or reset | verdict |',
    '|---|---|---:|---|---|---|---|---|---|---|',
    ...results.map(tableRow),
    '',
    ...results.flatMap((result) => {
      const { calls } = judgeCell(result);
      const failures = Object.entries(calls).flatMap(([kind, s]) => s.failures.map((f) => `${kind}: ${f}`));
      const lines = [...failures, ...result.counters];
      return lines.length === 0
        ? []
        : [`${result.spec.attack} / ${result.spec.transport} / ${result.spec.workers}:`, ...lines.map((l) => `    ${l}`)];
    }),
    '',
  ].join('\n');
}

async function run(options: AttackOptions): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`attack: ${line}\n`);
  const started = new Date();
  const plan = planCores(1);
  const cpus = plan.pinned ? { server: plan.single.serverCpus[0] ?? 0, load: plan.single.loadCpus[0] ?? 1 } : undefined;
  // ES256 beside HS256: a status list is signed with an asymmetric key.
  const keys = writeKeysFile(['HS256', 'ES256']);
  const flood = options.attacks.includes('issuer-flood') ? makeFloodCredentials() : undefined;
  const remove = (): void => {
    keys.remove();
    flood?.remove();
  };
  const unregister = registerCleanup(() => {
    void killAll();
    remove();
  });
  const results: CellResult[] = [];
  try {
    for (const attack of options.attacks)
      for (const transport of options.transports)
        for (const workers of options.workers) {
          const spec: CellSpec = {
            attack,
            transport,
            workers,
            seconds: options.seconds,
            from: options.from,
            spread: options.spread,
            keysFile: keys.path,
            ...(cpus !== undefined && { cpus }),
            ...(attack === 'issuer-flood' && floodSpec(flood as FloodCredentials)),
          };
          results.push(await runCell(spec, log));
          log(tableRow(results.at(-1) as CellResult));
        }
  } finally {
    unregister();
    remove();
  }
  const dir = createRunDir(join(DEFAULT_RESULTS_DIR, 'attack'), started);
  const text = summary(results, options, started);
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify({ started, options, results }, null, 1)}\n`);
  writeFileSync(join(dir, 'summary.md'), text);
  rmSync(join(DEFAULT_RESULTS_DIR, 'attack', 'latest'), { force: true });
  updateLatestLink(join(DEFAULT_RESULTS_DIR, 'attack'), dir.split('/').at(-1) as string);
  process.stdout.write(`${text}\nwritten to ${dir}/summary.md\n`);
  return results.every((result) => judgeCell(result).missed.length === 0) ? 0 : 1;
}

await runProgram({ name: 'attack', url: import.meta.url, help: () => HELP, parse, run });
