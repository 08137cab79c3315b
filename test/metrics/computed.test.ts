/** Metrics computed at scrape (src/metrics/computed.ts): the samples read fresh each time, type and aggregator as given. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerComputed } from '../../src/metrics/computed.js';

describe('registerComputed', () => {
  it('reads the samples on each scrape, with their labels copied', async () => {
    const registry = new Registry();
    const labels = { port: 'grpc' };
    let count = 1;
    registerComputed(registry, { name: 'x_total', help: 'X.', type: 'counter', samples: () => [{ labels, value: count }] });
    expect(await registry.metrics()).toBe('# HELP x_total X.\n# TYPE x_total counter\nx_total{port="grpc"} 1\n');
    count = 7;
    const [json] = await registry.getMetricsAsJSON();
    expect(json).toMatchObject({ name: 'x_total', type: 'counter', aggregator: 'sum', values: [{ labels: { port: 'grpc' }, value: 7 }] });
    expect((json as { values: { labels: unknown }[] }).values[0]?.labels).not.toBe(labels);
  });

  it('keeps the aggregator a cluster merges with, and a registry refuses the same name twice', () => {
    const registry = new Registry();
    registerComputed(registry, { name: 'up', help: 'Up.', type: 'gauge', aggregator: 'min', samples: () => [] });
    expect((registry.getSingleMetric('up') as unknown as { aggregator: string }).aggregator).toBe('min');
    expect(() => registerComputed(registry, { name: 'up', help: 'Up.', type: 'gauge', samples: () => [] })).toThrow(
      /already been registered/,
    );
  });
});
