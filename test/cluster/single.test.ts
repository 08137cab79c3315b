/**
 * One process serving the port (workers: 1): the keys and policy its loaders give, reloads
 * through those loaders, a reload with no loader refused with ERR_SERVER_STATE, and close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../src/cluster/handle.js';
import { resolveClusterOptions } from '../../src/cluster/options.js';
import { runSingle } from '../../src/cluster/single.js';
import { generateKeys } from '../../src/lib/index.js';
import { silentLogger } from '../../src/base/log.js';

const open: ClusterHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((handle) => handle.close()));
});

describe('runSingle', () => {
  it('serves the keys its loader gives and reloads them through the loader', async () => {
    const first = await generateKeys({ algorithms: ['ES256'] });
    const second = await generateKeys({ algorithms: ['ES256'] });
    const loads = [first, second];
    const handle = await runSingle(
      resolveClusterOptions({
        address: '127.0.0.1:0',
        logger: silentLogger,
        handleSignals: false,
        keys: async () => loads.shift() ?? second,
      }),
    );
    open.push(handle);
    expect([handle.role, handle.keys]).toEqual(['single', first]);
    expect(handle.port).toBeGreaterThan(0);
    expect(handle.servingPids()).toEqual([process.pid]);
    expect(await handle.reloadKeys()).toBe(second);
    expect(handle.keys).toBe(second);
    expect(handle.policy).toBeUndefined();
  });

  it('refuses a reload with no loader with ERR_SERVER_STATE saying why', async () => {
    const handle = await runSingle(resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger, handleSignals: false }));
    open.push(handle);
    await expect(handle.reloadKeys()).rejects.toMatchObject({
      code: 'ERR_SERVER_STATE',
      message: 'no key file to reload: the server runs on ephemeral keys (no keys option)',
    });
    await expect(handle.reloadPolicy()).rejects.toMatchObject({
      code: 'ERR_SERVER_STATE',
      message: 'no policy file to reload: the server was started without the policy option',
    });
  });

  it('serves the policy its loader gives', async () => {
    const policy = { callers: {} };
    const handle = await runSingle(
      resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger, handleSignals: false, policy: async () => policy }),
    );
    open.push(handle);
    expect(handle.policy).toEqual(policy);
    expect(await handle.reloadPolicy()).toEqual(policy);
  });

  it('resolves done with 0 once closed, and adds no signal listener when told not to', async () => {
    const before = ['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => process.listenerCount(signal));
    const handle = await runSingle(resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger, handleSignals: false }));
    expect(['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => process.listenerCount(signal))).toEqual(before);
    await handle.close();
    expect(await handle.done).toBe(0);
  });

  it('listens for stop and reload signals when it handles them, and stops listening once done', async () => {
    const before = ['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => process.listenerCount(signal));
    const handle = await runSingle(resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger }));
    expect(['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => process.listenerCount(signal))).toEqual(before.map((n) => n + 1));
    await handle.close();
    await handle.done;
    await new Promise((resolve) => setImmediate(resolve));
    expect(['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => process.listenerCount(signal))).toEqual(before);
  });
});
