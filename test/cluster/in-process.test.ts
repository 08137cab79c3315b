/**
 * A JwtServer started in this process the way a single process or a cluster worker starts
 * one: from the resolved cluster options with the keys given, listening on a port of its
 * own, and its exit latch resolved with 0 once close has drained it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type InProcessServer, listenInProcess } from '../../src/cluster/in-process.js';
import { resolveClusterOptions } from '../../src/cluster/options.js';
import { generateKeys } from '../../src/lib/index.js';
import { silentLogger } from '../../src/base/log.js';

const open: InProcessServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close(0)));
});

describe('listenInProcess', () => {
  it('serves with the keys given on the address of the options, and resolves done with 0 on close', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const options = resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger, handleSignals: false });
    const started = await listenInProcess(options, keys);
    open.push(started);
    expect(started.port).toBeGreaterThan(0);
    expect(started.server.service.keys).toBe(keys);
    let exited: number | undefined;
    void started.done.then((code) => (exited = code));
    await started.close(0);
    expect(exited).toBe(0);
  });

  it('takes server options from the cluster options, with overrides on top', async () => {
    const options = resolveClusterOptions({
      address: '127.0.0.1:0',
      logger: silentLogger,
      handleSignals: false,
      server: { transport: 'grpc-js', metricsPort: 0 },
    });
    const started = await listenInProcess(options, undefined, { metricsPort: undefined });
    open.push(started);
    expect([started.server.transport, started.server.metricsPort]).toEqual(['grpc-js', undefined]);
    // finish ends the process's wait without draining (the second signal's force).
    started.finish(1);
    expect(await started.done).toBe(1);
  });

  it('rejects when the port cannot be bound, naming the address', async () => {
    const first = await listenInProcess(
      resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger, handleSignals: false }),
      undefined,
    );
    open.push(first);
    const taken = resolveClusterOptions({ address: `127.0.0.1:${first.port}`, logger: silentLogger, handleSignals: false });
    await expect(listenInProcess(taken, undefined)).rejects.toThrow(String(first.port));
  });
});
