/**
 * A cluster's metrics (src/metrics/cluster.ts), over fake workers: each connected worker is
 * asked, the answers are summed with the primary's own, and a worker that exits or does not
 * answer in time is left out rather than holding the scrape.
 */
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClusterMetrics, workerMetricsJson } from '../../src/metrics/cluster.js';
import { registerComputed } from '../../src/metrics/computed.js';

/** A registry with one counter of `value`. */
function registryOf(value: number): Registry {
  const registry = new Registry();
  registerComputed(registry, { name: 'calls_total', help: 'Calls.', type: 'counter', samples: () => [{ labels: {}, value }] });
  return registry;
}

/** A worker that answers each request through `metrics.receive`, or stays silent, or exits. */
function fakeWorker(
  behaviour: { answer?: number; exit?: boolean; connected?: boolean },
  metrics: () => ClusterMetrics,
): Worker & { asked: number } {
  const worker = Object.assign(new EventEmitter(), {
    asked: 0,
    isConnected: () => behaviour.connected ?? true,
    send(message: { id: number }) {
      worker.asked += 1;
      if (behaviour.answer !== undefined) {
        const value = behaviour.answer;
        void registryOf(value)
          .getMetricsAsJSON()
          .then((json) => metrics().receive(message.id, json));
      }
      if (behaviour.exit === true) setImmediate(() => worker.emit('exit', 1));
      return true;
    },
  });
  return worker as unknown as Worker & { asked: number };
}

afterEach(() => vi.useRealTimers());

describe('ClusterMetrics', () => {
  it('sums the workers’ answers with the primary’s own; a disconnected worker is not asked', async () => {
    const metrics = new ClusterMetrics(registryOf(1));
    const workers = [
      fakeWorker({ answer: 10 }, () => metrics),
      fakeWorker({ answer: 100 }, () => metrics),
      fakeWorker({ connected: false }, () => metrics),
    ];
    const text = await metrics.text(workers);
    expect(text).toMatch(/^calls_total 111$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(workers.map((worker) => worker.asked)).toEqual([1, 1, 0]);
  });

  it('leaves out a worker that exits before answering', async () => {
    const metrics = new ClusterMetrics(registryOf(1));
    const started = Date.now();
    const text = await metrics.text([fakeWorker({ answer: 10 }, () => metrics), fakeWorker({ exit: true }, () => metrics)]);
    expect(text).toMatch(/^calls_total 11$/m);
    expect(Date.now() - started, 'not held until the 2 s deadline').toBeLessThan(1500);
  });

  it('leaves out a worker that does not answer within 2 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const metrics = new ClusterMetrics(registryOf(1));
    const scrape = metrics.text([fakeWorker({}, () => metrics)]);
    await vi.advanceTimersByTimeAsync(1999);
    let done = false;
    void scrape.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await scrape).toMatch(/^calls_total 1$/m);
  });

  it('ignores an answer to a request it no longer waits for', () => {
    expect(() => new ClusterMetrics(new Registry()).receive(42, [])).not.toThrow();
  });
});

describe('workerMetricsJson', () => {
  it('is the worker’s registry and its process metrics', async () => {
    const names = (await workerMetricsJson(registryOf(3))).map((metric) => metric.name);
    expect(names).toContain('calls_total');
    expect(names).toContain('process_cpu_user_seconds_total');
  });
});
