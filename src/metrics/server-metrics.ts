import type { Registry } from 'prom-client';
import { promClient } from '../base/optional-deps.js';
import { CallMetrics } from './calls.js';
import { ConnectionMetrics } from './connections.js';
import { DeadlineMetrics } from './deadlines.js';
import { processMetrics } from './process.js';
import { ReloadMetrics, ServiceMetrics } from './jwt-service-metrics.js';

/** Prometheus text exposition format 0.0.4, what `/metrics` answers. */
export function metricsContentType(): string {
  return promClient().Registry.PROMETHEUS_CONTENT_TYPE;
}

/**
 * Every metric of one server: calls (counted by the transport), the service's work and
 * key reloads, in one prom-client Registry; with the process's metrics when the registry
 * is jwt-grpc's own. @internal
 */
export class ServerMetrics {
  readonly registry: Registry;
  readonly calls: CallMetrics;
  readonly service: ServiceMetrics;
  readonly reloads: ReloadMetrics;
  readonly policyReloads: ReloadMetrics;
  /** Failed handshakes and refused connections of the server's ports. */
  readonly connections: ConnectionMetrics;
  /** Requests timed out and connections closed idle or old, on the gRPC port. */
  readonly deadlines: DeadlineMetrics;
  /** Whether the registry is jwt-grpc's own: then the process metrics go with it. */
  readonly #own: boolean;

  constructor(registry?: Registry) {
    this.#own = registry === undefined;
    this.registry = registry ?? new (promClient().Registry)();
    this.calls = new CallMetrics(this.registry);
    this.service = new ServiceMetrics(this.registry);
    this.reloads = new ReloadMetrics(this.registry);
    this.policyReloads = new ReloadMetrics(this.registry, 'policy');
    this.connections = new ConnectionMetrics(this.registry);
    this.deadlines = new DeadlineMetrics(this.registry);
  }

  /** Every metric to serve, as prom-client's JSON (what a cluster worker sends its primary). */
  async json(): Promise<Awaited<ReturnType<Registry['getMetricsAsJSON']>>> {
    const own = await this.registry.getMetricsAsJSON();
    return this.#own ? [...own, ...(await processMetrics().getMetricsAsJSON())] : own;
  }

  /** The text `/metrics` serves. */
  async text(): Promise<string> {
    return this.#own ? promClient().Registry.merge([this.registry, processMetrics()]).metrics() : this.registry.metrics();
  }
}
