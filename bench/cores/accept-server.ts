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
 * - `hand-off`: jwt-grpc's cluster (src/cluster/dispatcher.ts and inlet.ts): the primary
 *   accepts and sends each connection to the next worker over IPC, as `round-robin` does,
 *   and keeps its copy until the worker's `adopted` message.
 *
 * Prints `listening on 127.0.0.1:PORT` once every worker listens.
 * Usage: node accept-server.js round-robin|reuseport|hand-off WORKERS
 */
import cluster from 'node:cluster';
import { type Socket, createServer } from 'node:net';
import { ACCEPT_MODES, type AcceptMode } from './modes.js';
import { PortDispatcher } from '../../src/cluster/dispatcher.js';
import { ConnectionInlet } from '../../src/cluster/inlet.js';
import type { PrimaryMessage, WorkerMessage } from '../../src/cluster/messages.js';
import { silentLogger } from '../../src/base/log.js';
import { cannotListen } from '../../src/base/address.js';

interface Listening {
  readonly listening: number;
}

function runWorker(): void {
  const index = Number(process.env['ACCEPT_WORKER_INDEX']);
  const reply = Buffer.of(index);
  const answer = (socket: Socket): void => {
    socket.on('error', () => socket.destroy());
    // The server closes first, so TIME_WAIT lands here and not on the client's ephemeral ports.
    socket.end(reply);
  };
  if (process.env['ACCEPT_MODE'] === 'hand-off') return runHandOffWorker(answer);
  const server = createServer(answer);
  const reusePort = process.env['ACCEPT_MODE'] === 'reuseport';
  const port = Number(process.env['ACCEPT_PORT'] ?? '0');
  server.listen({ host: '127.0.0.1', port, reusePort, exclusive: reusePort }, () => {
    const address = server.address();
    process.send?.({ listening: typeof address === 'object' && address !== null ? address.port : 0 } satisfies Listening);
  });
}

/** A hand-off worker: binds nothing; takes the connections the primary sends, saying `adopted` for each. */
function runHandOffWorker(answer: (socket: Socket) => void): void {
  const port = Number(process.env['ACCEPT_PORT']);
  const inlet = new ConnectionInlet({ grpc: port }, (message: WorkerMessage) => process.send?.(message), silentLogger);
  inlet.ports.grpc.receive(answer);
  process.on('message', (message: PrimaryMessage, handle: unknown) => {
    if (message.type === 'jwt-grpc:connection') inlet.take(message, handle);
  });
  process.send?.({ listening: port } satisfies Listening);
}

function forkWorker(index: number, mode: AcceptMode, port: number, dispatcher?: PortDispatcher): Promise<number> {
  const worker = cluster.fork({ ACCEPT_WORKER_INDEX: String(index), ACCEPT_MODE: mode, ACCEPT_PORT: String(port) });
  return new Promise((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`worker ${index} exited with ${code}`)));
    worker.on('message', (message: Listening | WorkerMessage) => {
      if ('type' in message) return message.type === 'jwt-grpc:adopted' ? dispatcher?.adopted(worker, message.id) : undefined;
      dispatcher?.add(worker);
      resolve(message.listening);
    });
  });
}

async function runPrimary(mode: AcceptMode, workers: number): Promise<void> {
  // round-robin: the primary accepts (node:cluster's default everywhere but Windows, set here so that NODE_CLUSTER_SCHED_POLICY cannot change it).
  cluster.schedulingPolicy = cluster.SCHED_RR;
  // hand-off: the primary binds, then hands each connection to a worker.
  const dispatcher =
    mode === 'hand-off'
      ? await PortDispatcher.bind('grpc', { host: '127.0.0.1', port: 0, refused: (err) => cannotListen('127.0.0.1:0', err) }, silentLogger)
      : undefined;
  // reuseport: the first worker takes a free port, the others bind the same one.
  const port = await forkWorker(0, mode, dispatcher?.port ?? 0, dispatcher);
  for (let i = 1; i < workers; i++) await forkWorker(i, mode, mode === 'round-robin' ? 0 : port, dispatcher);
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
    process.stderr.write('usage: accept-server round-robin|reuseport|hand-off WORKERS (1-255)\n');
    process.exit(2);
  }
  await runPrimary(mode as AcceptMode, Number(workers));
} else {
  runWorker();
}
