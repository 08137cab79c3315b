/**
 * The call metrics on either transport: a transport-neutral server interceptor that
 * reports each call's start, and its end with the status sent and its duration.
 *
 * The interceptor sees the calls routed to a method; a call refused before that (an
 * unknown method, a bad content-type) is not counted. On the grpc-js transport, grpc-js
 * answers some calls below every interceptor (a deadline that fires, a request over the
 * size limit): those end as the adapter observes them, DEADLINE_EXCEEDED or CANCELLED.
 */
import type { CallInterceptor } from '../contracts/handler-api.js';
import type { CallMetrics, MethodCalls, MethodDescription } from './calls.js';

/**
 * An interceptor counting into `metrics`; `describe` gives a method's call kind by path
 * (the label `grpc_type`), from the definitions the server serves. @internal
 */
export function metricsInterceptor(metrics: CallMetrics, describe: (path: string) => MethodDescription): CallInterceptor {
  // Each method's counts are looked up by path once, then kept.
  const methods = new Map<string, MethodCalls>();
  const countsOf = (path: string): MethodCalls => {
    let counts = methods.get(path);
    if (counts === undefined) {
      counts = metrics.method(describe(path));
      methods.set(path, counts);
    }
    return counts;
  };
  return {
    onCallStart: (call) => countsOf(call.method).started(),
    onCallEnd: (call, outcome) => countsOf(call.method).ended(outcome.status, outcome.durationMs / 1000),
  };
}
