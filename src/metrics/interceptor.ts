/**
 * The call metrics on either transport: a transport-neutral server interceptor that
 * reports each call's start, and its end with the status sent and its duration.
 *
 * The interceptor sees the calls routed to a method; a call refused before that (an
 * unknown method, a bad content-type) is not counted. On the grpc-js transport, grpc-js
 * answers some calls below every interceptor (a deadline that fires, a request over the
 * size limit): those end as the adapter observes them, DEADLINE_EXCEEDED or CANCELLED.
 */
import type { CallContext, CallInterceptor } from '../contracts/handler-api.js';
import { CALL_PROTOCOL } from '../transport/protocols/wire.js';
import type { CallMetrics, MethodCalls, MethodDescription } from './calls.js';

/**
 * An interceptor counting into `metrics`; `describe` gives a method's call kind by path
 * (the label `grpc_type`), from the definitions the server serves. @internal
 */
export function metricsInterceptor(metrics: CallMetrics, describe: (path: string) => MethodDescription): CallInterceptor {
  // Each method's counts are looked up by path once, then kept; a gRPC call (no protocol
  // attached) costs the one lookup it always did.
  const methods = new Map<string, MethodCalls>();
  const others = new Map<string, MethodCalls>();
  const countsOf = (call: CallContext): MethodCalls => {
    const path = call.method;
    const protocol = call.get(CALL_PROTOCOL);
    const cache = protocol === undefined ? methods : others;
    const key = protocol === undefined ? path : `${protocol} ${path}`;
    let counts = cache.get(key);
    if (counts === undefined) {
      counts = metrics.method(protocol === undefined ? describe(path) : { ...describe(path), protocol });
      cache.set(key, counts);
    }
    return counts;
  };
  return {
    onCallStart: (call) => countsOf(call).started(),
    onCallEnd: (call, outcome) => countsOf(call).ended(outcome.status, outcome.durationMs / 1000),
  };
}
