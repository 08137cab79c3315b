/**
 * h2load (nghttp2's HTTP/2 load generator, written in C) as a second gRPC load generator:
 * it sends one fixed POST body per request and needs far less CPU per call than ghz, so
 * that on a 2-core machine the server, not the load generator, sets the pace. It knows
 * nothing of gRPC: it counts HTTP statuses and never reads trailers, where a gRPC
 * error's `grpc-status` travels inside an HTTP 200. The cell therefore checks every
 * call's status on the server's side (ok-count.ts).
 */

/** One h2load run against a gRPC method. */
export interface H2loadCall {
  readonly port: number;
  /** `/package.Service/Method`. */
  readonly path: string;
  /** A file holding the gRPC length-prefixed request (bench/kit/grpc-body.ts). */
  readonly bodyFile: string;
  /** Threads (`-t`): one per CPU h2load is pinned to; more only add context switches. */
  readonly threads: number;
  /** Connections (`-c`), spread over the threads. */
  readonly connections: number;
  /** Streams in flight per connection (`-m`). */
  readonly streams: number;
  readonly durationS: number;
}

/**
 * h2load's arguments. `http://` makes it speak HTTP/2 over cleartext with prior knowledge,
 * as gRPC does. `content-type: application/grpc` and `te: trailers` are what a gRPC
 * server requires of a request (others are refused before the method runs).
 */
export function h2loadArgs(call: H2loadCall): string[] {
  return [
    '-t',
    String(call.threads),
    '-c',
    String(call.connections),
    '-m',
    String(call.streams),
    '-D',
    `${Math.round(call.durationS * 1000)}ms`,
    '-d',
    call.bodyFile,
    '-H',
    'content-type: application/grpc',
    '-H',
    'te: trailers',
    `http://127.0.0.1:${call.port}${call.path}`,
  ];
}

/** The counts of h2load's text report. */
export interface H2loadSummary {
  /** Seconds of the measured window (`finished in`). */
  readonly finishedS: number;
  /** Requests h2load counted as succeeded: answered with HTTP 2xx or 3xx, gRPC status unknown. */
  readonly succeeded: number;
  readonly failed: number;
  readonly errored: number;
  readonly timeout: number;
  readonly status2xx: number;
}

/**
 * Parses h2load's report:
 * ```
 * finished in 5.00s, 12345.60 req/s, 1.23MB/s
 * requests: 61728 total, 61778 started, 61728 done, 61728 succeeded, 0 failed, 0 errored, 0 timeout
 * status codes: 61728 2xx, 0 3xx, 0 4xx, 0 5xx
 * ```
 * Throws when a line is missing (h2load failed before its report).
 */
export function parseH2loadOutput(text: string): H2loadSummary {
  const finished = text.match(/^finished in ([\d.]+)(m?s),/m);
  const requests = text.match(/^requests: .*?(\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/m);
  const codes = text.match(/^status codes: (\d+) 2xx/m);
  if (finished === null || requests === null || codes === null) {
    throw new Error(`h2load printed no report:\n${text.trim().slice(-2000)}`);
  }
  const finishedS = Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1);
  return {
    finishedS,
    succeeded: Number(requests[1]),
    failed: Number(requests[2]),
    errored: Number(requests[3]),
    timeout: Number(requests[4]),
    status2xx: Number(codes[1]),
  };
}
