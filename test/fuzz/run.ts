/**
 * The fuzzer's runner: `npm run fuzz -- [--minutes N | --seconds N] [--seed S] [--from I --count C]`.
 * Starts the server as a child process, sends batches of generated inputs on fresh
 * connections, checks the oracle's invariants after each batch, and prints what the run
 * covered. A violation saves the batch's inputs to the corpus and prints the command that
 * replays them. Exit status 1 when an invariant failed.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeEntry } from './corpus.js';
import { drive } from './drive.js';
import { type Counts, type Input, count, exchangeSeed, generate } from './generate.js';
import { check, serverState, usedBytes } from './oracle.js';
import { Prng } from './prng.js';

interface RunOptions {
  readonly seed: number;
  readonly durationMs: number;
  readonly from: number;
  readonly count: number;
  readonly concurrency: number;
}

function parseArgs(argv: readonly string[]): RunOptions {
  const value = (flag: string): number | undefined => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const parsed = Number(argv[i + 1]);
    if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`${flag}: a non-negative number is required, got ${argv[i + 1]}`);
    return parsed;
  };
  const seconds = value('--seconds') ?? (value('--minutes') ?? 1) * 60;
  return {
    seed: value('--seed') ?? Date.now() % 0x1_0000_0000,
    durationMs: seconds * 1000,
    from: value('--from') ?? 0,
    count: value('--count') ?? Number.POSITIVE_INFINITY,
    concurrency: value('--concurrency') ?? 4,
  };
}

function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(new URL('./server.js', import.meta.url)), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }));
    child.once('exit', (code) => reject(new Error(`server exited before listening (code ${code})`)));
  });
}

function report(counts: Counts, exchanges: number, elapsedMs: number, seed: number): void {
  const sorted = Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
  console.log(JSON.stringify({ seed, exchanges, seconds: Math.round(elapsedMs / 1000), counts: sorted }, null, 1));
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  console.log(`fuzz: seed ${options.seed} (replay: npm run fuzz -- --seed ${options.seed})`);
  const { child, port } = await startServer();
  const started = Date.now();
  const counts: Counts = new Map();
  const baseline = (await check(child, port, Number.POSITIVE_INFINITY, 0)) ?? (await usedBytes(child));
  if (typeof baseline !== 'number') throw new Error(`server unhealthy before fuzzing: ${baseline.detail}`);
  let index = options.from;
  let status = 0;
  while (Date.now() - started < options.durationMs && index < options.from + options.count) {
    const batch: { index: number; input: Input }[] = [];
    for (let n = 0; n < options.concurrency && index < options.from + options.count; n++, index++) {
      batch.push({ index, input: generate(new Prng(exchangeSeed(options.seed, index)), counts) });
    }
    const results = await Promise.all(
      batch.map(({ index: i, input }) => drive(port, input.bytes, new Prng(exchangeSeed(options.seed, i) ^ 1), 150)),
    );
    for (const result of results) {
      count(counts, result.serverClosed ? 'server:closed' : 'server:kept-open');
      for (const type of result.frameTypes) count(counts, `server-frame:${type}`);
    }
    const violation = await check(child, port, baseline, options.concurrency);
    if (violation !== undefined) {
      const first = batch[0]?.index ?? 0;
      console.error(`fuzz: ${violation.invariant} violated: ${violation.detail}`);
      console.error(`fuzz: replay with: npm run fuzz -- --seed ${options.seed} --from ${first} --count ${batch.length}`);
      // The source corpus (npm runs scripts from the package root), not the compiled copy's folder.
      const corpusDir = join(process.cwd(), 'test', 'fuzz', 'corpus');
      mkdirSync(corpusDir, { recursive: true });
      for (const { index: i, input } of batch) {
        const comment = `found by seed ${options.seed}, exchange ${i}: ${violation.invariant} (${violation.detail})\n${input.kind}, mutations: ${input.mutations.join(', ') || 'none'}`;
        console.error(`fuzz: saved ${writeEntry(corpusDir, `seed-${options.seed}-${i}.hex`, input.bytes, comment)}`);
      }
      status = 1;
      break;
    }
  }
  if (child.connected) for (const [key, n] of Object.entries((await serverState(child)).logged)) count(counts, `server-log:${key}`, n);
  report(counts, index - options.from, Date.now() - started, options.seed);
  if (child.connected) child.send('close');
  return status;
}

process.exitCode = await main();
