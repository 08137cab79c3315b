/**
 * A remote verifier's counters (src/metrics/remote-jwks-metrics.ts): keys left out and failed
 * fetches, one counter per registry, every label shown from zero.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { fetchFailureCount, rejectedKeyCounts } from '../../src/metrics/remote-jwks-metrics.js';

describe('rejectedKeyCounts', () => {
  it('shares one set of counts per registry and shows each reason', async () => {
    const registry = new Registry();
    const counts = rejectedKeyCounts(registry);
    expect(rejectedKeyCounts(registry), 'registered once').toBe(counts);
    (counts.get('weak') as { count: number }).count += 2;
    (counts.get('encoding') as { count: number }).count += 1;
    expect((await registry.metrics()).split('\n').filter((line) => line.startsWith('jwt_grpc_'))).toEqual([
      'jwt_grpc_remote_jwks_rejected_keys_total{reason="weak"} 2',
      'jwt_grpc_remote_jwks_rejected_keys_total{reason="mismatch"} 0',
      'jwt_grpc_remote_jwks_rejected_keys_total{reason="encoding"} 1',
      'jwt_grpc_remote_jwks_rejected_keys_total{reason="malformed"} 0',
      'jwt_grpc_remote_jwks_rejected_keys_total{reason="unsupported"} 0',
    ]);
    expect(rejectedKeyCounts(new Registry())).not.toBe(counts);
  });
});

describe('fetchFailureCount', () => {
  it('shares one counter per registry and shows each document and answer', async () => {
    const registry = new Registry();
    const count = fetchFailureCount(registry);
    expect(fetchFailureCount(registry), 'registered once').toBe(count);
    count('jwks', 'last_good');
    count('jwks', 'last_good');
    count('status_list', 'refused');
    expect((await registry.metrics()).split('\n').filter((line) => line.startsWith('jwt_grpc_'))).toEqual([
      'jwt_grpc_remote_fetch_failures_total{document="jwks",answer="last_good"} 2',
      'jwt_grpc_remote_fetch_failures_total{document="jwks",answer="refused"} 0',
      'jwt_grpc_remote_fetch_failures_total{document="status_list",answer="last_good"} 0',
      'jwt_grpc_remote_fetch_failures_total{document="status_list",answer="refused"} 1',
    ]);
    expect(fetchFailureCount(new Registry())).not.toBe(count);
  });
});
