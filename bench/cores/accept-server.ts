/**
 * The server of the accept-rate measurement (accept-rate.ts): a node:cluster primary and
 * N workers, each worker answering every new TCP connection with one byte (its index)
 * and closing it. Two ways to accept, the only difference between the modes:
 *
 * - `round-robin`: node:cluster's default on Linux; the primary owns the listening
 *   socket, accepts every connection and sends its handle to the next worker over IPC.
 * - `reuseport`: each worker binds its own socket to the port with SO_REUSEPORT
 *   (`reusePort: true`, Node >= 22.12; `exclusive: true` keeps the primary out of it),
 *   and the kernel spreads the connections, hashing each one's 4-tuple.
 *
 * Prints `listening on 127.0.0.1:PORT` once every worker listens.
 * Usage: node accept-server.js round-robin|reuseport WORKERS
 */
import cluster from 'node:cluster';
import { createServer } from 'node:net';
import { ACCEPT_MODES, type AcceptMode } from './modes.js';

interface Listening {
  readonly listening: number;
}

function runWorker(): void {
  const index = Number(process.env['ACCEPT_WORKER_INDEX']);
  const reply = Buffer.of(index);
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    // The server closes first, so TIME_WAIT lands here and not on the client's ephemeral ports.
    socket.end(reply);
  });
  const reusePort = process.env['ACCEPT_MODE'] === 'reuseport';
  const port = Number(process.env['ACCEPT_PORT'] ?? '0');
  server.listen({ host: '127.0.0.1', port, reusePort, exclusive: reusePort }, () => {
    const address = server.address();
    process.send?.({ listening: typeof address === 'object' && address !== null ? address.port : 0 } satisfies Listening);
  });
}

function forkWorker(index: number, mode: AcceptMode, port: number): Promise<number> {
  const worker = cluster.fork({ ACCEPT_WORKER_INDEX: String(index), ACCEPT_MODE: mode, ACCEPT_PORT: String(port) });
  return new Promise((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`worker ${index} exited with ${code}`)));
    worker.on('message', (message: Listening) => resolve(message.listening));
  });
}

async function runPrimary(mode: AcceptMode, workers: number): Promise<void> {
  // round-robin: the primary accepts (node:cluster's default everywhere but Windows, set here so that NODE_CLUSTER_SCHED_POLICY cannot change it).
  cluster.schedulingPolicy = cluster.SCHED_RR;
  // reuseport: the first worker takes a free port, the others bind the same one.
  const port = await forkWorker(0, mode, 0);
  for (let i = 1; i < workers; i++) await forkWorker(i, mode, mode === 'reuseport' ? port : 0);
  process.stdout.write(`listening on 127.0.0.1:${port}\n`);
  const stop = (): void => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGKILL');
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (cluster.isPrimary) {
  const [mode, workers] = process.argv.slice(2);
  if (!ACCEPT_MODES.includes(mode as AcceptMode) || !(Number(workers) >= 1 && Number(workers) <= 255)) {
    process.stderr.write('usage: accept-server round-robin|reuseport WORKERS (1-255)\n');
    process.exit(2);
  }
  await runPrimary(mode as AcceptMode, Number(workers));
} else {
  runWorker();
}
