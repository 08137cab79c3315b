/**
 * The client of the accept-rate measurement: C loops, each opening a TCP connection,
 * reading the worker's one-byte answer and waiting for the server's close, then the next,
 * for S seconds. Then, W connections at once (W = the workers), 200 times: how often they
 * land on W different workers, what a client with W long-lived connections can hope for.
 * Prints one JSON line: connections completed, errors, how many each worker answered, and
 * that share.
 * Usage: node accept-client.js PORT CONNECTIONS SECONDS WORKERS
 */
import { connect } from 'node:net';

const [port, loops, seconds, workers] = process.argv.slice(2).map(Number);
if (!(port! > 0 && loops! > 0 && seconds! > 0 && workers! > 0)) {
  process.stderr.write('usage: accept-client PORT CONNECTIONS SECONDS WORKERS\n');
  process.exit(2);
}

const perWorker: number[] = [];
const errors: Record<string, number> = {};
let completed = 0;
const started = performance.now();
const deadline = started + seconds! * 1000;

/** One connection: resolves with the index of the worker that answered, or -1. */
function once(): Promise<number> {
  return new Promise((resolve) => {
    let worker = -1;
    const socket = connect({ host: '127.0.0.1', port: port!, noDelay: true });
    socket.on('data', (data) => (worker = data[0] ?? -1));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.message;
      errors[code] = (errors[code] ?? 0) + 1;
    });
    socket.on('close', (hadError) => {
      if (!hadError && worker >= 0) {
        completed++;
        perWorker[worker] = (perWorker[worker] ?? 0) + 1;
      }
      resolve(hadError ? -1 : worker);
    });
    socket.on('end', () => socket.end());
  });
}

async function loop(): Promise<void> {
  while (performance.now() < deadline) await once();
}

await Promise.all(Array.from({ length: loops! }, loop));
const elapsedS = (performance.now() - started) / 1000;
const counts = { completed, elapsedS, perWorker: Array.from(perWorker, (n) => n ?? 0), errors: { ...errors } };

const TRIALS = 200;
let spread = 0;
for (let trial = 0; trial < TRIALS; trial++) {
  const answered = await Promise.all(Array.from({ length: workers! }, once));
  if (new Set(answered.filter((w) => w >= 0)).size === workers) spread++;
}
process.stdout.write(JSON.stringify({ ...counts, evenShare: spread / TRIALS }) + '\n');
