import { createJwtServer } from '../server/create.js';
import { type ClusterHandle, onStopSignals } from './handle.js';
import type { ResolvedClusterOptions } from './options.js';

/** NODEMAXPROCS=1: the server runs in this process; the same handle as a cluster. @internal */
export async function runSingle(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  const keys = options.keys === undefined ? undefined : await options.keys();
  const server = createJwtServer({ ...options.server, keys, logger: options.logger });
  const credentials = options.credentials === undefined ? undefined : await options.credentials();
  const port = await server.listen(options.address, credentials);

  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const close = (): Promise<void> => server.close({ graceMs: options.graceMs }).then(() => finish(0));
  if (options.handleSignals) {
    const removeSignals = onStopSignals(
      () => {
        options.logger.info('draining: no new calls; calls in flight may finish', { graceMs: options.graceMs });
        void close();
      },
      () => {
        options.logger.warn('second signal: forcing shutdown');
        server.grpcServer.forceShutdown();
        finish(1);
      },
    );
    void done.then(removeSignals);
  }
  return { role: 'single', port, keys: server.service.keys, servingPids: () => [process.pid], close, done };
}
