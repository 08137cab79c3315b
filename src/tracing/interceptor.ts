/**
 * A SERVER span per call, on either transport, as one {@link CallInterceptor}: named
 * `{rpc.service}/{rpc.method}` and carrying the attributes @opentelemetry/instrumentation-grpc
 * writes for grpc-js servers (`rpc.system`, `rpc.service`, `rpc.method`,
 * `rpc.grpc.status_code`), plus the peer as the network semantic conventions name it
 * (`network.peer.address`, `network.peer.port`), so that dashboards built for grpc-js match.
 * The parent is the caller's span from the request metadata (./propagation.ts).
 *
 * `OTEL_SEMCONV_STABILITY_OPT_IN=rpc` switches to the stable RPC conventions
 * (https://opentelemetry.io/docs/specs/semconv/rpc/): `rpc.system.name`, `rpc.method` as the
 * fully qualified `service/method`, `rpc.status_code` as the status's name, and `error.type`
 * on an error; `rpc/dup` writes both sets, where `rpc.method` (a key both use) takes the new
 * form. The variable is read once, when the interceptor is made.
 *
 * With a `meter`, each call's duration is recorded too, beside the Prometheus `/metrics`:
 * `rpc.server.duration` in milliseconds (the conventions instrumentation-grpc follows) or,
 * with the stable conventions, `rpc.server.call.duration` in seconds; both with the span's
 * RPC attributes (no peer address: that would make a series per client).
 *
 * Installed only when tracing is on: a server without it does no tracing work per call.
 */
import {
  type Attributes,
  type Histogram,
  type Meter,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { type CallInterceptor, GrpcStatus, type StatusCode } from '../contracts/handler-api.js';
import { splitPath } from './names.js';
import { parentContext } from './propagation.js';
import { SERVER_SPAN_CONTEXT, SERVER_TRACER } from './server-context.js';

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

/** Which RPC conventions to write, from OTEL_SEMCONV_STABILITY_OPT_IN (a comma-separated list). */
export function rpcConventions(optIn: string | undefined): { readonly legacy: boolean; readonly stable: boolean } {
  const entries = (optIn ?? '').split(',').map((entry) => entry.trim());
  if (entries.includes('rpc/dup')) return { legacy: true, stable: true };
  if (entries.includes('rpc')) return { legacy: false, stable: true };
  return { legacy: true, stable: false };
}

/** Status names by code, as the stable conventions write `rpc.status_code`. */
const STATUS_NAMES = new Map<number, string>(Object.entries(GrpcStatus).map(([name, code]) => [code, name]));

/** `ip:port` (IPv6 as `[ip]:port` or bare) as address and port. */
function splitPeer(peer: string): { address: string; port: number | undefined } {
  const colon = peer.lastIndexOf(':');
  const port = colon < 0 ? Number.NaN : Number(peer.slice(colon + 1));
  if (!Number.isInteger(port)) return { address: peer, port: undefined };
  const host = peer.slice(0, colon);
  return { address: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port };
}

/**
 * What the calls of one method share: the span's name, its attributes that do not change
 * from call to call, and, made on first use, the span options of the last peer seen and
 * the duration metrics' attributes by status. A connection's calls share its peer, so a
 * call on the connection of the one before starts its span with the options of that one:
 * no attribute object built per call. The SDK copies the attributes it is given and the
 * metrics SDK keys its series by their values: neither keeps nor changes these objects.
 */
interface MethodSpan {
  readonly name: string;
  readonly attributes: Attributes;
  peer: string | undefined;
  options: SpanOptions | undefined;
  readonly durationAttributes: Map<StatusCode, { ms: Attributes; s: Attributes }>;
}

/** The span options of a call of `method` from `peer`. */
function spanOptions(method: MethodSpan, peer: string): SpanOptions {
  if (method.peer !== peer || method.options === undefined) {
    const { address, port } = splitPeer(peer);
    method.options = {
      kind: SpanKind.SERVER,
      attributes: { ...method.attributes, 'network.peer.address': address, ...(port === undefined ? {} : { 'network.peer.port': port }) },
    };
    method.peer = peer;
  }
  return method.options;
}

/** The attributes the duration metrics record a call of `method` that ended with `status` with. */
function durationAttributes(method: MethodSpan, status: StatusCode): { ms: Attributes; s: Attributes } {
  let known = method.durationAttributes.get(status);
  if (known === undefined) {
    known = {
      ms: { ...method.attributes, 'rpc.grpc.status_code': status },
      s: { ...method.attributes, 'rpc.status_code': STATUS_NAMES.get(status) ?? String(status) },
    };
    method.durationAttributes.set(status, known);
  }
  return known;
}

/** The call-duration histograms of the conventions written, as `meter` makes them. */
function durationHistograms(meter: Meter | undefined, legacy: boolean, stable: boolean): { ms?: Histogram; s?: Histogram } {
  if (meter === undefined) return {};
  return {
    ...(legacy ? { ms: meter.createHistogram('rpc.server.duration', { unit: 'ms', description: 'Duration of inbound RPCs' }) } : {}),
    ...(stable ? { s: meter.createHistogram('rpc.server.call.duration', { unit: 's', description: 'Duration of inbound RPCs' }) } : {}),
  };
}

/**
 * The server interceptor tracing every call with `tracer`, and recording durations with
 * `meter` when given; `optIn` is OTEL_SEMCONV_STABILITY_OPT_IN. @internal
 */
export function tracingInterceptor(
  tracer: Tracer,
  meter?: Meter,
  optIn: string | undefined = process.env['OTEL_SEMCONV_STABILITY_OPT_IN'],
): CallInterceptor {
  const { legacy, stable } = rpcConventions(optIn);
  const durations = durationHistograms(meter, legacy, stable);
  const methods = new Map<string, MethodSpan>();
  const methodSpan = (path: string): MethodSpan => {
    let known = methods.get(path);
    if (known === undefined) {
      const { service, method } = splitPath(path);
      const name = service === '' ? method : `${service}/${method}`;
      known = {
        name,
        attributes: {
          ...(legacy ? { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method } : {}),
          ...(stable ? { 'rpc.system.name': 'grpc', 'rpc.method': name } : {}),
        },
        peer: undefined,
        options: undefined,
        durationAttributes: new Map(),
      };
      methods.set(path, known);
    }
    return known;
  };
  return {
    onCallStart(call) {
      const method = methodSpan(call.method);
      const parent = parentContext(call.metadata);
      const span = tracer.startSpan(method.name, spanOptions(method, call.peer), parent);
      call.set(SERVER_SPAN_CONTEXT, trace.setSpan(parent, span));
      call.set(SERVER_TRACER, tracer);
    },
    onCallEnd(call, outcome) {
      const context = call.get(SERVER_SPAN_CONTEXT);
      const span = context === undefined ? undefined : trace.getSpan(context);
      if (span === undefined) return;
      const failed = SERVER_ERROR_CODES.has(outcome.status);
      if (legacy) span.setAttribute('rpc.grpc.status_code', outcome.status);
      if (stable) {
        const statusName = STATUS_NAMES.get(outcome.status) ?? String(outcome.status);
        span.setAttribute('rpc.status_code', statusName);
        if (failed) span.setAttribute('error.type', statusName);
      }
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.details });
      span.end();
      if (durations.ms !== undefined || durations.s !== undefined) {
        const attributes = durationAttributes(methodSpan(call.method), outcome.status);
        durations.ms?.record(outcome.durationMs, attributes.ms);
        durations.s?.record(outcome.durationMs / 1000, attributes.s);
      }
    },
  };
}
