/**
 * A call's parent span (src/tracing/propagation.ts): W3C traceparent/tracestate first, then
 * OpenCensus grpc-trace-bin; anything malformed or all-zero is no parent.
 */
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { parentContext, parseGrpcTraceBin, parseTraceparent } from '../../src/tracing/propagation.js';
import { CallMetadata } from '../../src/contracts/handler-api.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

/** grpc-trace-bin: version 0, field 0 trace id, field 1 span id, field 2 options. */
function traceBin(traceId = TRACE, spanId = SPAN, flags: number | null = 1): Buffer {
  const parts = [Buffer.from([0, 0]), Buffer.from(traceId, 'hex'), Buffer.from([1]), Buffer.from(spanId, 'hex')];
  if (flags !== null) parts.push(Buffer.from([2, flags]));
  return Buffer.concat(parts);
}

describe('parseTraceparent', () => {
  it('reads a version-00 header, sampled or not, with its tracestate', () => {
    const parent = parseTraceparent(`00-${TRACE}-${SPAN}-01`, 'vendor=a,other=b');
    expect(parent).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(parent?.traceState?.get('vendor')).toBe('a');
    expect(parseTraceparent(` 00-${TRACE}-${SPAN}-00 `, undefined)).toMatchObject({ traceFlags: TraceFlags.NONE });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`, undefined)?.traceFlags, 'only the sampled bit').toBe(TraceFlags.SAMPLED);
  });

  it('reads a later version with more fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-future`, undefined)).toMatchObject({ traceId: TRACE });
  });

  it.each([
    [`ff-${TRACE}-${SPAN}-01`],
    [`00-${TRACE}-${SPAN}-01-extra`],
    [`00-${TRACE.toUpperCase()}-${SPAN}-01`],
    [`00-${'0'.repeat(32)}-${SPAN}-01`],
    [`00-${TRACE}-${'0'.repeat(16)}-01`],
    [`00-${TRACE}-${SPAN}`],
    ['garbage'],
  ])('refuses %s', (value) => {
    expect(parseTraceparent(value, undefined)).toBeUndefined();
  });
});

describe('parseGrpcTraceBin', () => {
  it('reads the binary form, options optional', () => {
    expect(parseGrpcTraceBin(traceBin())).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(parseGrpcTraceBin(traceBin(TRACE, SPAN, null))).toMatchObject({ traceFlags: TraceFlags.NONE });
  });

  it.each([
    ['too short', traceBin().subarray(0, 26)],
    ['another version', Buffer.concat([Buffer.from([1]), traceBin().subarray(1)])],
    [
      'fields out of place',
      (() => {
        const b = Buffer.from(traceBin());
        b[18] = 2;
        return b;
      })(),
    ],
    ['an all-zero trace id', traceBin('0'.repeat(32))],
  ])('refuses %s', (_what, bytes) => {
    expect(parseGrpcTraceBin(bytes)).toBeUndefined();
  });
});

describe('parentContext', () => {
  it('prefers traceparent, joins every tracestate, falls back to grpc-trace-bin, else the root', () => {
    const both = new CallMetadata()
      .set('traceparent', `00-${TRACE}-${SPAN}-01`)
      .add('tracestate', 'a=1')
      .add('tracestate', 'b=2')
      .set('grpc-trace-bin', traceBin('1'.repeat(32)));
    const parent = trace.getSpanContext(parentContext(both));
    expect(parent?.traceId).toBe(TRACE);
    expect(parent?.traceState?.serialize()).toBe('a=1,b=2');
    const binary = new CallMetadata().set('traceparent', 'garbage').set('grpc-trace-bin', traceBin('1'.repeat(32)));
    expect(trace.getSpanContext(parentContext(binary))?.traceId).toBe('1'.repeat(32));
    expect(parentContext(new CallMetadata())).toBe(ROOT_CONTEXT);
  });
});
