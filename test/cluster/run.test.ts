/**
 * runCluster's choice of role in this process: options refused before anything starts, and
 * one process serving the port itself when workers is 1 (more workers fork, which
 * cluster.integration.test.ts runs).
 */
import { describe, expect, it } from 'vitest';
import { runCluster } from '../../src/cluster/run.js';
import { silentLogger } from '../../src/base/log.js';

describe('runCluster', () => {
  it('serves in this process when workers is 1', async () => {
    const handle = await runCluster({ address: '127.0.0.1:0', workers: 1, logger: silentLogger, handleSignals: false });
    try {
      expect(handle.role).toBe('single');
      expect(handle.servingPids()).toEqual([process.pid]);
    } finally {
      await handle.close();
    }
  });

  it('refuses bad options before starting anything, naming the option', () => {
    expect(() => runCluster({ address: 'nowhere', logger: silentLogger })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'address',
        message: 'option address: must be host:port, got "nowhere"',
      }),
    );
  });
});
