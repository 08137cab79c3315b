/** Keys a remote verifier left out (src/metrics/remote-jwks-metrics.ts): one counter per registry, every reason shown from zero. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { rejectedKeyCounts } from '../../src/metrics/remote-jwks-metrics.js';

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
