/**
 * Metrics whose samples are computed when scraped, from counts the hot path keeps in
 * plain numbers. prom-client's own `inc`/`observe` builds a label key string and
 * validates the labels on every call (prom-client 15, lib/util.js `hashObject`); a
 * computed metric moves that work to the scrape, once per series, where prom-client
 * still does the rest: exposition format, registries, cluster aggregation.
 */
import type { Aggregator, Metric, Registry } from 'prom-client';

/** One sample: labels and value; `metricName` for a histogram's `_bucket`, `_sum`, `_count`. */
export interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName?: string;
}

export interface ComputedMetricSpec {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** How a cluster primary combines workers' samples: `sum` (default) or `max` (the same value in every worker). */
  readonly aggregator?: Aggregator;
  readonly samples: () => readonly Sample[];
}

/**
 * Registers a computed metric. A prom-client Registry reads a metric through its `name`,
 * `type` and `get()` (prom-client's `AggregatorRegistry.aggregate` registers plain objects
 * of this shape itself); the cast is only for its type definitions, which list its classes.
 */
export function registerComputed(registry: Registry, spec: ComputedMetricSpec): void {
  const { name, help, type, aggregator = 'sum', samples } = spec;
  const metric = {
    name,
    help,
    type,
    aggregator,
    get: async () => ({ name, help, type, aggregator, values: samples().map((sample) => ({ ...sample, labels: { ...sample.labels } })) }),
    reset: () => undefined,
  };
  registry.registerMetric(metric as unknown as Metric);
}
