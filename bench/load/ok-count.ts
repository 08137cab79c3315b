/**
 * The server's own count of finished calls by outcome: how the h2load cell checks every
 * call's gRPC status, which h2load cannot see (a gRPC error is an HTTP 200 whose
 * `grpc-status` is in the trailers). Read before and after each run:
 * - jwt-grpc: its Prometheus endpoint (`serve --metrics-port 0`),
 *   `grpc_server_handled_total{grpc_method, grpc_code}` (src/metrics/calls.ts);
 * - the Go peer: `--count-calls`, which prints `calls ok=N failed=M` on SIGUSR1.
 *
 * A call the server never handled (refused by the transport before the method ran) is in
 * neither count; {@link statusErrors} catches it as an HTTP 200 the server did not count OK.
 */
import type { ServerProcess } from '../kit/launcher.js';

export interface CallCounts {
  readonly ok: number;
  /** Calls that ended with any other gRPC status. */
  readonly failed: number;
}

/** Reads a server's counts now. */
export type CallCounter = () => Promise<CallCounts>;

/** Sums `grpc_server_handled_total` of one method by outcome (Prometheus text format). */
export function parseHandledTotal(text: string, method: string): CallCounts {
  let ok = 0;
  let failed = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('grpc_server_handled_total{')) continue;
    const labels = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
    if (!labels.includes(`grpc_method="${method}"`)) continue;
    const value = Number(
      line
        .slice(line.lastIndexOf('}') + 1)
        .trim()
        .split(/\s+/)[0],
    );
    if (labels.includes('grpc_code="OK"')) ok += value;
    else failed += value;
  }
  return { ok, failed };
}

/** The counter of a `jwt-grpc serve --metrics-port 0` process: its metrics URL from the start-up banner. */
export async function metricsCounter(server: ServerProcess, method: string): Promise<CallCounter> {
  const { match } = await server.waitFor('stdout', /metrics: (http:\/\/\S+\/metrics)/, 10_000);
  const url = match[1] as string;
  return async () => {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    return parseHandledTotal(await response.text(), method);
  };
}

const COUNT_LINE = /calls ok=(\d+) failed=(\d+)\n/;

/** The counter of the Go peer started with `--count-calls`: SIGUSR1, then the next `calls` line. */
export function signalCounter(server: ServerProcess): CallCounter {
  return async () => {
    const from = server.stdout.length;
    server.signal('SIGUSR1');
    const { match } = await server.waitFor('stdout', COUNT_LINE, 10_000, from);
    return { ok: Number(match[1]), failed: Number(match[2]) };
  };
}

/**
 * Calls of a run that did not end OK: what the server counted as failed, plus HTTP 2xx
 * answers the load generator saw beyond the server's OK count (answers not from the
 * method: a transport-level refusal). The server may count a few more OK calls than the
 * generator saw (calls still in flight when it stopped measuring): those are no error.
 */
export function statusErrors(before: CallCounts, after: CallCounts, http2xx: number): number {
  return after.failed - before.failed + Math.max(0, http2xx - (after.ok - before.ok));
}
