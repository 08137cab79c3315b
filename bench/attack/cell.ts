/**
 * One cell of `npm run bench:attack`: a fresh `jwt-grpc serve` (one transport, one or two
 * processes, under an open-files limit of 1024), a legitimate caller warmed up and then kept
 * calling, an attacker process started beside it from another source address, and what each
 * saw. The server's RSS is sampled throughout; after the connection-churn attack the cell waits
 * {@link SETTLE_MS} more and reads it again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Transport } from '../../src/lib/index.js';
import { type CliServer, serveArgs, startCli } from '../kit/cli.js';
import { tasksetCommand } from '../kit/exec.js';
import { repoPath } from '../kit/paths.js';
import { statusBytes } from '../kit/proc.js';
import type { AttackCounts, AttackName, AttackTarget, AttackTls } from './attackers.js';
import { type CallerRecords, LegitimateCaller } from './caller.js';

/** The open-files limit the server runs under: a common container limit (its connection cap is then 768). */
export const SERVER_OPEN_FILES = 1024;
/** Calls before the attack starts, not counted: the first calls pay for the first connections and compilation. */
const WARM_UP_MS = 3000;
/** How long after the churn attack the RSS is read again (the bound: back within 10 % 30 s after). */
export const SETTLE_MS = 30_000;
const RSS_SAMPLE_MS = 200;

export interface CellSpec {
  readonly attack: AttackName;
  readonly transport: Transport;
  /** 1: a single process; 2: a cluster of two workers. */
  readonly workers: 1 | 2;
  readonly seconds: number;
  /** The attacker's source address, the first of `spread` (default 1) consecutive ones. */
  readonly from: string;
  readonly spread?: number;
  readonly keysFile: string;
  /** CPU of the server (single process) and of the caller and attacker; none: unpinned. */
  readonly cpus?: { readonly server: number; readonly load: number };
  /** Calls before the attack starts, not counted; default {@link WARM_UP_MS}. */
  readonly warmUpMs?: number;
  /** How long after the churn attack the RSS is read again; default {@link SETTLE_MS}. */
  readonly settleMs?: number;
  /** Flags added to `jwt-grpc serve`. */
  readonly serveFlags?: readonly string[];
  /** Mutual TLS: the caller's and the attacker's certificates (the server's come in `serveFlags`). */
  readonly tls?: { readonly caller: AttackTls; readonly attacker: AttackTls };
}

export interface CellResult {
  readonly spec: Omit<CellSpec, 'keysFile' | 'tls'>;
  readonly caller: CallerRecords;
  readonly attacker: AttackCounts | undefined;
  /** The serving processes' RSS, summed: after warm-up, the peak under attack, and (churn) after {@link SETTLE_MS}. */
  readonly rss: { readonly warm: number; readonly peak: number; readonly settled: number | undefined };
  /** The server's guard counters at the end (non-zero `jwt_grpc_*_total` lines about connections, streams and handshakes). */
  readonly counters: readonly string[];
}

/** How long an attacker may outlive its cell's attack time before it stops by itself. */
const ATTACKER_GRACE_S = 60;

/** The built attacker, whoever imports this module (the tests run it from source). */
const ATTACKER_ENTRY = repoPath('dist', 'bench', 'attack', 'attacker-child.js');

function portOf(stdout: string, pattern: RegExp): number | undefined {
  const match = stdout.match(pattern);
  return match === null ? undefined : Number(match[1]);
}

function serveFlags(spec: CellSpec): string[] {
  return serveArgs(
    '--transport',
    spec.transport,
    '--keys',
    spec.keysFile,
    '--metrics-port',
    '0',
    '--http-port',
    '0',
    '--issuer',
    'https://issuer.example',
    ...(spec.serveFlags ?? []),
  );
}

function rssOf(server: CliServer): number {
  return server.workerPids.reduce((sum, pid) => sum + (statusBytes(pid, 'VmRSS') ?? 0), 0);
}

function startAttacker(spec: CellSpec, target: AttackTarget): ChildProcess {
  const { command, args } = tasksetCommand(spec.cpus === undefined ? [] : [spec.cpus.load], process.execPath, [
    ATTACKER_ENTRY,
    spec.attack,
    JSON.stringify(target),
    // Its own bound, past the cell's: stopped over IPC long before, unless this process hangs.
    String(spec.seconds + ATTACKER_GRACE_S),
  ]);
  return spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function stopAttacker(child: ChildProcess): Promise<AttackCounts | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(undefined);
    }, 10_000);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve((message as { counts: AttackCounts }).counts);
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.send('stop');
  });
}

/** The counters a guard moves, read from the metrics port (the primary's sum in a cluster). */
async function guardCounters(host: string, metricsPort: number | undefined): Promise<string[]> {
  if (metricsPort === undefined) return [];
  try {
    const text = await (await fetch(`http://${host}:${metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    return text
      .split('\n')
      .filter((line) =>
        /^jwt_grpc_\w*(connection|stream|handshake|goaway|idle|deadline|refused|policy_decisions|tokens_issued)\w*_total\b/.test(line),
      )
      .filter((line) => !/ 0$/.test(line));
  } catch (error) {
    return [`(metrics unreadable: ${(error as Error).message})`];
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one cell and stops everything it started. */
export async function runCell(spec: CellSpec, log: (line: string) => void): Promise<CellResult> {
  const server = await startCli(serveFlags(spec), {
    openFiles: SERVER_OPEN_FILES,
    env: spec.workers === 2 ? { NODEMAXPROCS: '2' } : {},
    ...(spec.cpus !== undefined && spec.workers === 1 && { cpus: [spec.cpus.server] }),
  });
  const host = '127.0.0.1';
  const ports = {
    grpcPort: server.port,
    httpPort: portOf(server.stdout, /discovery: https?:\/\/[^\s/]+:(\d+)\//),
    metricsPort: portOf(server.stdout, /metrics: http:\/\/[^\s/]+:(\d+)\//),
  };
  const caller = new LegitimateCaller({ host, ...ports, ...(spec.tls !== undefined && { tls: spec.tls.caller }) });
  let attacker: ChildProcess | undefined;
  let callerStopped = false;
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(server));
  }, RSS_SAMPLE_MS);
  try {
    caller.start();
    await sleep(spec.warmUpMs ?? WARM_UP_MS);
    const warm = rssOf(server);
    peak = warm;
    caller.record();
    const from = { from: spec.from, ...(spec.spread !== undefined && { spread: spec.spread }) };
    attacker = startAttacker(spec, { host, ...ports, ...from, ...(spec.tls !== undefined && { tls: spec.tls.attacker }) });
    log(`${spec.attack} on ${spec.transport}, ${spec.workers} process(es): ${spec.seconds} s`);
    await sleep(spec.seconds * 1000);
    const counts = await stopAttacker(attacker);
    attacker = undefined;
    callerStopped = true;
    const records = await caller.stop();
    let settled: number | undefined;
    if (spec.attack === 'churn') {
      await sleep(spec.settleMs ?? SETTLE_MS);
      settled = rssOf(server);
    }
    const counters = await guardCounters(host, ports.metricsPort);
    const { keysFile: _keysFile, tls: _tls, ...shown } = spec;
    return { spec: shown, caller: records, attacker: counts, rss: { warm, peak, settled }, counters };
  } finally {
    clearInterval(sampler);
    attacker?.kill('SIGKILL');
    if (!callerStopped) await caller.stop();
    await server.stop(5000);
  }
}
