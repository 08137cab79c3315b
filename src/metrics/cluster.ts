/**
 * `/metrics` of a cluster: the primary asks every worker for its metrics over the IPC
 * channel at each scrape and serves their sum (prom-client's `AggregatorRegistry.aggregate`,
 * each metric by its aggregator: counters and histograms summed), with its own (key
 * reloads, its process) added, so one scrape tells the whole server. A worker that has
 * just died is missing from the sum until its replacement counts from 0: Prometheus'
 * rate() reads a drop of a counter as a reset.
 */
import type { Worker } from 'node:cluster';
import type { Registry } from 'prom-client';
import { promClient } from '../base/optional-deps.js';
import { processMetrics } from './process.js';

// The metrics part of the cluster's IPC protocol; src/cluster/messages.ts joins these into
// its message unions. They live here because metrics sit below the cluster layer.
/** A scrape of `/metrics`: the worker answers with its metrics. */
export type MetricsRequestMessage = { readonly type: 'jwt-grpc:metrics-request'; readonly id: number };
/** prom-client's JSON of the worker's metrics (`Registry.getMetricsAsJSON`). */
export type MetricsAnswerMessage = { readonly type: 'jwt-grpc:metrics'; readonly id: number; readonly metrics: readonly unknown[] };

/** How long a scrape waits for a worker's answer before it leaves that worker out. */
const WORKER_ANSWER_MS = 2000;

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** The primary's side: asks, collects and sums. @internal */
export class ClusterMetrics {
  readonly #own: Registry;
  readonly #pending = new Map<number, (metrics: MetricsJson) => void>();
  #nextId = 0;

  /** `own`: the primary's registry (key reloads, the key gauge). */
  constructor(own: Registry) {
    this.#own = own;
  }

  /** A worker's answer (its `jwt-grpc:metrics` message). */
  receive(id: number, metrics: readonly unknown[]): void {
    this.#pending.get(id)?.(metrics as MetricsJson);
  }

  /** The text of `/metrics`: the sum over `workers` and this process. */
  async text(workers: readonly Worker[]): Promise<string> {
    const answers = await Promise.all(workers.filter((worker) => worker.isConnected()).map((worker) => this.#ask(worker)));
    const lists = [
      ...answers.filter((answer) => answer !== undefined),
      await this.#own.getMetricsAsJSON(),
      await processMetrics().getMetricsAsJSON(),
    ];
    return promClient().AggregatorRegistry.aggregate(lists).metrics();
  }

  #ask(worker: Worker): Promise<MetricsJson | undefined> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const done = (metrics: MetricsJson | undefined): void => {
        clearTimeout(timer);
        this.#pending.delete(id);
        worker.off('exit', gone);
        resolve(metrics);
      };
      const gone = (): void => done(undefined);
      const timer = setTimeout(gone, WORKER_ANSWER_MS);
      worker.once('exit', gone);
      this.#pending.set(id, done);
      worker.send({ type: 'jwt-grpc:metrics-request', id } satisfies MetricsRequestMessage);
    });
  }
}

/** A worker's side: its metrics as prom-client JSON, the process's included. @internal */
export async function workerMetricsJson(registry: Registry): Promise<MetricsJson> {
  return [...(await registry.getMetricsAsJSON()), ...(await processMetrics().getMetricsAsJSON())];
}
