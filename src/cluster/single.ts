import type { KeySet } from '../keys/key-set.js';
import type { JwtPolicy } from '../policy/document.js';
import { type ClusterHandle, noKeyLoader, noPolicyLoader, onReloadSignal, onStopSignals } from './handle.js';
import { listenInProcess } from './in-process.js';
import type { ResolvedClusterOptions } from './options.js';

/** NODEMAXPROCS=1: the server runs in this process; the same handle as a cluster. @internal */
export async function runSingle(options: ResolvedClusterOptions): Promise<ClusterHandle> {
  const keys = options.keys === undefined ? undefined : await options.keys();
  const policy = options.policy === undefined ? undefined : await options.policy();
  const { server, port, done, finish, close } = await listenInProcess(options, keys, policy === undefined ? {} : { policy });
  const load = options.keys;
  const reloadKeys = (): Promise<KeySet> => (load === undefined ? Promise.reject(noKeyLoader()) : server.service.reloadKeys(load));
  const loadPolicy = options.policy;
  const reloadPolicy = (): Promise<JwtPolicy> =>
    loadPolicy === undefined ? Promise.reject(noPolicyLoader()) : server.service.reloadPolicy(loadPolicy);
  if (options.handleSignals) {
    const removeSignals = onStopSignals(
      () => {
        options.logger.info('draining: no new calls; calls in flight may finish', { graceMs: options.graceMs });
        void close();
      },
      () => {
        // The drain is not waited for: the process ends with code 1, cutting what is left.
        options.logger.warn('second signal: forcing shutdown');
        finish(1);
      },
    );
    void done.then(removeSignals);
    void done.then(onReloadSignal({ keys: load && reloadKeys, policy: loadPolicy && reloadPolicy }, options.logger));
  }
  return {
    role: 'single',
    port,
    get keys() {
      return server.service.keys;
    },
    reloadKeys,
    get policy() {
      return server.service.policy;
    },
    reloadPolicy,
    metricsPort: server.metricsPort,
    httpPort: server.httpPort,
    servingPids: () => [process.pid],
    close: () => close(),
    done,
  };
}
