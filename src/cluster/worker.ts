import { importKeys } from '../keys/import.js';
import { createJwtServer, type JwtServer } from '../server/create.js';
import type { ClusterHandle } from './handle.js';
import { type PrimaryMessage, type WorkerMessage, isPrimaryMessage } from './messages.js';
import type { ResolvedClusterOptions } from './options.js';

function send(message: WorkerMessage): void {
  process.send?.(message);
}

/**
 * A cluster worker: waits for the keys from the primary, runs exactly the
 * single-process server, and drains when the primary says so. @internal
 */
export async function runWorker(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  // Ctrl-C reaches the whole process group; the primary decides how to stop.
  process.on('SIGINT', () => {});

  const start = await new Promise<Extract<PrimaryMessage, { type: 'jwt-grpc:start' }>>((resolve) => {
    const onMessage = (message: unknown): void => {
      if (isPrimaryMessage(message) && message.type === 'jwt-grpc:start') {
        process.off('message', onMessage);
        resolve(message);
      }
    };
    process.on('message', onMessage);
    send({ type: 'jwt-grpc:hello' });
  });

  const keys = importKeys(start.jwks);
  const server: JwtServer = createJwtServer({ ...options.server, keys, logger: options.logger });
  const credentials = options.credentials === undefined ? undefined : await options.credentials();
  const port = await server.listen(options.address, credentials);

  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const close = (graceMs = options.graceMs): Promise<void> => server.close({ graceMs }).then(() => finish(0));

  process.on('message', (message: unknown) => {
    if (isPrimaryMessage(message) && message.type === 'jwt-grpc:shutdown') void close(message.graceMs);
  });
  // A worker told to stop directly, or orphaned by a dead primary, drains too.
  process.on('SIGTERM', () => void close());
  process.on('disconnect', () => void close());

  send({ type: 'jwt-grpc:listening', port });
  return { role: 'worker', port, keys, servingPids: () => [process.pid], close: () => close(), done };
}
