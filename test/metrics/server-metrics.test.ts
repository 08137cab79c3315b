/** A server's metrics (src/metrics/server-metrics.ts): its own registry merged with the process's; a registry given stays the caller's. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ServerMetrics, metricsContentType } from '../../src/metrics/server-metrics.js';

describe('ServerMetrics', () => {
  it('adds the process metrics to a registry of its own', async () => {
    const metrics = new ServerMetrics();
    metrics.reloads.reloads += 1;
    const text = await metrics.text();
    expect(text).toMatch(/^jwt_grpc_key_reloads_total 1$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    const names = (await metrics.json()).map((metric) => metric.name);
    expect(names).toContain('jwt_grpc_policy_reloads_total');
    expect(names).toContain('process_cpu_user_seconds_total');
  });

  it('leaves the process metrics to the owner of a registry it is given', async () => {
    const registry = new Registry();
    const metrics = new ServerMetrics(registry);
    const text = await metrics.text();
    expect(text).toMatch(/^# TYPE grpc_server_started_total counter$/m);
    expect(text).not.toMatch(/process_cpu_user_seconds_total/);
    expect((await metrics.json()).map((metric) => metric.name)).not.toContain('process_cpu_user_seconds_total');
  });

  it('serves the Prometheus text format', () => {
    expect(metricsContentType()).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});
