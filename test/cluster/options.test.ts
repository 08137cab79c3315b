/**
 * runCluster's options, checked once in the primary: defaults, the address, the server's
 * options (so a bad one stops the start once instead of in every respawned worker), the
 * loaders as functions, and each refusal an ERR_INVALID_OPTION naming the option.
 */
import { describe, expect, it } from 'vitest';
import { CLUSTER_OPTION_NAMES, type ClusterOptions, resolveClusterOptions } from '../../src/cluster/options.js';
import { JwtGrpcError } from '../../src/base/errors.js';
import { silentLogger } from '../../src/base/log.js';

function refusal(options: unknown): JwtGrpcError {
  try {
    resolveClusterOptions(options as ClusterOptions);
  } catch (err) {
    if (err instanceof JwtGrpcError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('resolveClusterOptions', () => {
  it('fills the defaults of the option table', () => {
    const resolved = resolveClusterOptions({ address: '127.0.0.1:0', logger: silentLogger });
    expect(resolved).toMatchObject({
      address: '127.0.0.1:0',
      workers: 1,
      graceMs: 10_000,
      server: {},
      keys: undefined,
      policy: undefined,
      tls: undefined,
      logger: silentLogger,
    });
  });

  it('keeps the loaders and the server options given', () => {
    const keys = async () => {
      throw new Error('not called');
    };
    const resolved = resolveClusterOptions({
      address: '[::1]:50051',
      workers: 2,
      keys,
      server: { transport: 'grpc-js' },
      logger: silentLogger,
    });
    expect(resolved).toMatchObject({ workers: 2, keys, server: { transport: 'grpc-js' } });
  });

  it('names every option it takes', () => {
    expect(CLUSTER_OPTION_NAMES).toEqual(
      expect.arrayContaining(['workers', 'graceMs', 'address', 'server', 'keys', 'policy', 'tls', 'logger']),
    );
  });

  it('refuses options that are not an object', () => {
    const err = refusal(null);
    expect([err.code, err.field, err.message]).toEqual(['ERR_INVALID_OPTION', 'options', 'option options: must be an object']);
  });

  it('refuses an address that is not host:port', () => {
    for (const address of [undefined, 'localhost', 50051]) {
      const err = refusal({ address });
      expect([err.code, err.field, err.message]).toEqual([
        'ERR_INVALID_OPTION',
        'address',
        `option address: must be host:port, got ${JSON.stringify(address)}`,
      ]);
    }
  });

  it('refuses an unknown option, and keys or logger given inside server, saying where they go', () => {
    let err = refusal({ address: '127.0.0.1:0', worker: 2 });
    expect([err.code, err.field]).toEqual(['ERR_INVALID_OPTION', 'worker']);
    expect(err.message).toMatch(/runCluster.*did you mean workers\?/);
    err = refusal({ address: '127.0.0.1:0', server: { logger: silentLogger } });
    expect(err.code).toBe('ERR_INVALID_OPTION');
    expect(err.message).toContain("give it as runCluster's own logger");
  });

  it('refuses a bad server option in the primary, named by its path', () => {
    const err = refusal({ address: '127.0.0.1:0', server: { maxReceiveMessageBytes: 1 } });
    expect([err.code, err.field]).toEqual(['ERR_INVALID_OPTION', 'server.maxReceiveMessageBytes']);
  });

  it('refuses a bad worker count or grace period', () => {
    expect(refusal({ address: '127.0.0.1:0', workers: 0 }).field).toBe('workers');
    expect(refusal({ address: '127.0.0.1:0', graceMs: -1 }).field).toBe('graceMs');
  });

  it('refuses loaders that are not functions', () => {
    for (const name of ['keys', 'policy', 'tls']) {
      const err = refusal({ address: '127.0.0.1:0', [name]: {} });
      expect([err.code, err.field, err.message]).toEqual(['ERR_INVALID_OPTION', name, `option ${name}: must be a function`]);
    }
  });

  it('refuses a policy loader beside server.policy', () => {
    const err = refusal({ address: '127.0.0.1:0', policy: async () => ({ callers: {} }), server: { policy: { callers: {} } } });
    expect([err.code, err.field, err.message]).toEqual([
      'ERR_INVALID_OPTION',
      'policy',
      'option policy: give the policy loader or server.policy, not both',
    ]);
  });
});
