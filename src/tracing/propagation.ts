/**
 * The parent of a server span, read from the request's metadata with the API alone (the
 * library depends on @opentelemetry/api only, whose propagators are no-ops until an SDK
 * registers some): W3C Trace Context (`traceparent`, `tracestate`,
 * https://www.w3.org/TR/trace-context/) first, else OpenCensus's binary `grpc-trace-bin`
 * (https://github.com/census-instrumentation/opencensus-specs/blob/master/encodings/BinaryEncoding.md),
 * which grpc-go and grpc-java's OpenCensus integrations send. Malformed values are ignored:
 * the span then starts a new trace, as the W3C specification asks.
 */
import { Buffer } from 'node:buffer';
import { type Context, ROOT_CONTEXT, type SpanContext, TraceFlags, createTraceState, isSpanContextValid, trace } from '@opentelemetry/api';
import type { CallMetadata } from '../contracts/handler-api.js';

/** `version-traceid-spanid-flags`, version 00 (later versions may append fields after a dash). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A span context from a `traceparent` header, or undefined when it is not a valid one. */
export function parseTraceparent(value: string, tracestate: string | undefined): SpanContext | undefined {
  const match = TRACEPARENT.exec(value.trim());
  if (match === null) return undefined;
  const [, version, traceId = '', spanId = '', flags = '', rest] = match;
  // Version ff is invalid; version 00 has exactly four fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context: SpanContext = {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(tracestate === undefined ? {} : { traceState: createTraceState(tracestate) }),
  };
  return isSpanContextValid(context) ? context : undefined;
}

/**
 * A span context from OpenCensus's binary format: version 0, then fields 0 (trace id), 1
 * (span id) and, optionally, 2 (options: bit 0 is "sampled").
 */
export function parseGrpcTraceBin(bytes: Buffer): SpanContext | undefined {
  if (bytes.length < 27 || bytes[0] !== 0 || bytes[1] !== 0 || bytes[18] !== 1) return undefined;
  const traceId = bytes.toString('hex', 2, 18);
  const spanId = bytes.toString('hex', 19, 27);
  const traceFlags = bytes[27] === 2 ? (bytes[28] ?? 0) & TraceFlags.SAMPLED : TraceFlags.NONE;
  const context: SpanContext = { traceId, spanId, traceFlags, isRemote: true };
  return isSpanContextValid(context) ? context : undefined;
}

/** The context a server span of a call with `metadata` starts in: its remote parent, or none. */
export function parentContext(metadata: CallMetadata): Context {
  const traceparent = metadata.get('traceparent');
  let parent: SpanContext | undefined;
  if (typeof traceparent === 'string') {
    const tracestate = metadata.getAll('tracestate').filter((value) => typeof value === 'string');
    parent = parseTraceparent(traceparent, tracestate.length === 0 ? undefined : tracestate.join(','));
  }
  if (parent === undefined) {
    const binary = metadata.get('grpc-trace-bin');
    if (Buffer.isBuffer(binary)) parent = parseGrpcTraceBin(binary);
  }
  return parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
}
