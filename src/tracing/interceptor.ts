/**
 * A SERVER span per call, on either transport, as one {@link CallInterceptor}: named
 * `{rpc.service}/{rpc.method}` and carrying the attributes @opentelemetry/instrumentation-grpc
 * writes for grpc-js servers (`rpc.system`, `rpc.service`, `rpc.method`,
 * `rpc.grpc.status_code`), plus the peer as the network semantic conventions name it
 * (`network.peer.address`, `network.peer.port`), so that dashboards built for grpc-js match.
 * The parent is the caller's span from the request metadata (./propagation.ts).
 *
 * Installed only when tracing is on: a server without it does no tracing work per call.
 */
import { type Context, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { CallKey, type CallInterceptor, GrpcStatus, type StatusCode } from '../transport/handler-api.js';
import { parentContext } from './propagation.js';

/** The context of a call's server span, for the spans its handler starts (jwt.sign, jwt.verify). @internal */
export const SERVER_SPAN_CONTEXT = new CallKey<Context>('OpenTelemetry server span context');

/**
 * The codes the RPC semantic conventions mark a server span ERROR for: those that say the
 * server failed, not the caller (https://opentelemetry.io/docs/specs/semconv/rpc/grpc/).
 */
const SERVER_ERROR_CODES: ReadonlySet<StatusCode> = new Set([
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
]);

/** `/pkg.Service/Method` as its service and method; a path without a second slash is all method. */
function splitPath(path: string): { service: string; method: string } {
  const slash = path.indexOf('/', 1);
  return slash < 0 ? { service: '', method: path.slice(1) } : { service: path.slice(1, slash), method: path.slice(slash + 1) };
}

/** `ip:port` (IPv6 as `[ip]:port` or bare) as address and port. */
function splitPeer(peer: string): { address: string; port: number | undefined } {
  const colon = peer.lastIndexOf(':');
  const port = colon < 0 ? Number.NaN : Number(peer.slice(colon + 1));
  if (!Number.isInteger(port)) return { address: peer, port: undefined };
  const host = peer.slice(0, colon);
  return { address: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port };
}

/** Attributes by method path, computed once per method. */
type MethodNames = Map<string, { name: string; service: string; method: string }>;

/** The server interceptor tracing every call with `tracer`. @internal */
export function tracingInterceptor(tracer: Tracer): CallInterceptor {
  const methods: MethodNames = new Map();
  const namesOf = (path: string) => {
    let names = methods.get(path);
    if (names === undefined) {
      const { service, method } = splitPath(path);
      names = { name: service === '' ? method : `${service}/${method}`, service, method };
      methods.set(path, names);
    }
    return names;
  };
  return {
    onCallStart(call) {
      const { name, service, method } = namesOf(call.method);
      const peer = splitPeer(call.peer);
      const parent = parentContext(call.metadata);
      const span = tracer.startSpan(
        name,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'rpc.system': 'grpc',
            'rpc.service': service,
            'rpc.method': method,
            'network.peer.address': peer.address,
            ...(peer.port === undefined ? {} : { 'network.peer.port': peer.port }),
          },
        },
        parent,
      );
      call.set(SERVER_SPAN_CONTEXT, trace.setSpan(parent, span));
    },
    onCallEnd(call, outcome) {
      const context = call.get(SERVER_SPAN_CONTEXT);
      const span = context === undefined ? undefined : trace.getSpan(context);
      if (span === undefined) return;
      span.setAttribute('rpc.grpc.status_code', outcome.status);
      if (SERVER_ERROR_CODES.has(outcome.status)) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.details });
      span.end();
    },
  };
}
