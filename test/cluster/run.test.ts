/**
 * runCluster's choice of role in this process: one process serving the port itself when
 * workers is 1 (more workers fork, which cluster.integration.test.ts runs). Options refused
 * before anything starts: test/options/rules.test.ts and test/cluster/options.test.ts.
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
});
