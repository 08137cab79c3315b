/** Connection counts (src/metrics/connections.ts): handshake failures by port and reason, refusals by port and reason. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConnectionMetrics } from '../../src/metrics/connections.js';

describe('ConnectionMetrics', () => {
  it('counts each port and reason on its own, and shows nothing before the first', async () => {
    const registry = new Registry();
    const metrics = new ConnectionMetrics(registry);
    expect(await registry.metrics()).not.toMatch(/^jwt_grpc_/m);
    metrics.handshakeFailed('grpc', 'tls');
    metrics.handshakeFailed('grpc', 'tls');
    metrics.handshakeFailed('grpc', 'preface');
    metrics.handshakeFailed('metrics', 'timeout');
    metrics.refused('discovery', 'cap');
    metrics.refused('discovery', 'cap');
    metrics.refused('discovery', 'peer_share');
    const text = await registry.metrics();
    expect(text.split('\n').filter((line) => line.startsWith('jwt_grpc_'))).toEqual([
      'jwt_grpc_handshake_failures_total{port="grpc",reason="tls"} 2',
      'jwt_grpc_handshake_failures_total{port="grpc",reason="preface"} 1',
      'jwt_grpc_handshake_failures_total{port="metrics",reason="timeout"} 1',
      'jwt_grpc_connections_refused_total{port="discovery",reason="cap"} 2',
      'jwt_grpc_connections_refused_total{port="discovery",reason="peer_share"} 1',
    ]);
  });
});
