/**
 * gRPC call metrics, transport-neutral: whatever serves the calls (a grpc-js `Server`
 * through `./grpc-js.ts`, or jwt-grpc's own transport) reports each call's start, and its
 * end with the final status code and duration. Names and labels are those of the gRPC
 * ecosystem's Prometheus middleware (go-grpc-prometheus, nice-grpc-prometheus):
 *
 * - `grpc_server_started_total{grpc_type, grpc_service, grpc_method, protocol}`
 * - `grpc_server_handled_total{grpc_type, grpc_service, grpc_method, protocol, grpc_code}`
 * - `grpc_server_handling_seconds{grpc_type, grpc_service, grpc_method, protocol, grpc_code}` (histogram)
 *
 * `protocol` is jwt-grpc's own: the protocol the calls came in by (`grpc`, `grpc-web`,
 * `connect`: docs/protocols.md), each with its own series.
 *
 * `grpc_code` is the status code's name as https://github.com/grpc/grpc/blob/master/doc/statuscodes.md writes it
 * (`OK`, `INVALID_ARGUMENT`), as nice-grpc-prometheus does (go-grpc-prometheus writes Go's
 * names, `InvalidArgument`).
 *
 * The hot path adds to numbers in arrays made once per method (and per status code on
 * its first use): no string, label object or map lookup per call once a transport keeps
 * the {@link MethodCalls} of each method.
 */
import type { Registry } from 'prom-client';
import { type Sample, registerComputed } from './computed.js';

/** gRPC status code names, by code (https://github.com/grpc/grpc/blob/master/doc/statuscodes.md). */
const CODE_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

const UNKNOWN = 2;

/**
 * Upper bounds of `grpc_server_handling_seconds`, in seconds: Prometheus' default buckets
 * (5 ms to 10 s) with 0.25, 0.5, 1 and 2.5 ms below them, since a JwtService call takes
 * a fraction of a millisecond of server time.
 */
export const HANDLING_SECONDS_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** What a transport knows about a method: grpc-js's method definitions and jwt-grpc's own have these members. */
export interface MethodDescription {
  /** `/package.Service/Method`. */
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  /** The protocol its calls came in by. Default grpc. */
  readonly protocol?: string;
}

/** The counts of one method; a transport gets it once per method and keeps it. */
export interface MethodCalls {
  /** A call of this method started (its headers arrived). */
  started(): void;
  /** A call of this method ended with status `code` after `seconds`. */
  ended(code: number, seconds: number): void;
}

/** Counts of one status code of one method. */
class CodeCounts {
  handled = 0;
  sum = 0;
  readonly buckets = new Float64Array(HANDLING_SECONDS_BUCKETS.length);
}

class MethodCounts implements MethodCalls {
  readonly labels: Readonly<Record<string, string>>;
  startedCount = 0;
  readonly byCode: (CodeCounts | undefined)[] = new Array(CODE_NAMES.length).fill(undefined);

  constructor(method: MethodDescription) {
    const type = method.requestStream
      ? method.responseStream
        ? 'bidi_stream'
        : 'client_stream'
      : method.responseStream
        ? 'server_stream'
        : 'unary';
    const slash = method.path.lastIndexOf('/');
    this.labels = {
      grpc_type: type,
      grpc_service: method.path.slice(1, Math.max(slash, 1)),
      grpc_method: method.path.slice(slash + 1),
      protocol: method.protocol ?? 'grpc',
    };
  }

  started(): void {
    this.startedCount += 1;
  }

  ended(code: number, seconds: number): void {
    const index = code >= 0 && code < CODE_NAMES.length && Number.isInteger(code) ? code : UNKNOWN;
    const counts = (this.byCode[index] ??= new CodeCounts());
    counts.handled += 1;
    counts.sum += seconds;
    // Buckets are stored per bound, not cumulatively; the scrape sums them.
    let bucket = 0;
    while (bucket < HANDLING_SECONDS_BUCKETS.length && seconds > (HANDLING_SECONDS_BUCKETS[bucket] as number)) bucket += 1;
    if (bucket < counts.buckets.length) counts.buckets[bucket] = (counts.buckets[bucket] as number) + 1;
  }
}

/**
 * The gRPC call counts of one server.
 *
 * @example
 * ```ts
 * const calls = new CallMetrics(registry);
 * const generate = calls.method({ path: '/jwt.services.JwtService/GenerateJwt', requestStream: false, responseStream: false });
 * generate.started();
 * generate.ended(0, 0.0004); // OK after 0.4 ms
 * ```
 */
export class CallMetrics {
  readonly #methods = new Map<string, MethodCounts>();

  constructor(registry: Registry) {
    const methods = (): MethodCounts[] => [...this.#methods.values()];
    registerComputed(registry, {
      name: 'grpc_server_started_total',
      help: 'Total number of RPCs started on the server.',
      type: 'counter',
      samples: () => methods().map((method) => ({ labels: method.labels, value: method.startedCount })),
    });
    registerComputed(registry, {
      name: 'grpc_server_handled_total',
      help: 'Total number of RPCs completed on the server, regardless of success or failure.',
      type: 'counter',
      samples: () => this.#eachCode((labels, counts) => [{ labels, value: counts.handled }]),
    });
    registerComputed(registry, {
      name: 'grpc_server_handling_seconds',
      help: 'Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.',
      type: 'histogram',
      samples: () => this.#eachCode(histogramSamples),
    });
  }

  /** The counts of a method (by one protocol), made on first use; a transport calls this once per method and keeps the result. */
  method(method: MethodDescription): MethodCalls {
    const key = method.protocol === undefined || method.protocol === 'grpc' ? method.path : `${method.protocol} ${method.path}`;
    let counts = this.#methods.get(key);
    if (counts === undefined) {
      counts = new MethodCounts(method);
      this.#methods.set(key, counts);
    }
    return counts;
  }

  #eachCode(samples: (labels: Readonly<Record<string, string>>, counts: CodeCounts) => Sample[]): Sample[] {
    const out: Sample[] = [];
    for (const method of this.#methods.values()) {
      method.byCode.forEach((counts, code) => {
        if (counts !== undefined) out.push(...samples({ ...method.labels, grpc_code: CODE_NAMES[code] as string }, counts));
      });
    }
    return out;
  }
}

function histogramSamples(labels: Readonly<Record<string, string>>, counts: CodeCounts): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  HANDLING_SECONDS_BUCKETS.forEach((bound, index) => {
    cumulative += counts.buckets[index] as number;
    out.push({ metricName: 'grpc_server_handling_seconds_bucket', labels: { ...labels, le: bound }, value: cumulative });
  });
  out.push({ metricName: 'grpc_server_handling_seconds_bucket', labels: { ...labels, le: '+Inf' }, value: counts.handled });
  out.push({ metricName: 'grpc_server_handling_seconds_sum', labels, value: counts.sum });
  out.push({ metricName: 'grpc_server_handling_seconds_count', labels, value: counts.handled });
  return out;
}
