/**
 * streamHandler: the checks a request's headers pass before a call starts, each refused as
 * the protocol says (HTTP 405 and 415; grpc-status INTERNAL or UNIMPLEMENTED with a message
 * naming the problem), on a stand-in stream that records what it is answered. A call that
 * passes them is Http2Call's (test/transport/http2/*.test.ts, over a real connection).
 */
import { describe, expect, it, vi } from 'vitest';
import { GrpcStatus } from '../../../src/contracts/handler-api.js';
import type { CallShared } from '../../../src/transport/http2/call.js';
import { refuseCall, streamHandler } from '../../../src/transport/http2/dispatch.js';
import { Router } from '../../../src/transport/http2/router.js';
import type { SessionState } from '../../../src/transport/http2/session.js';
import type { H2Stream, RequestHeaders } from '../../../src/transport/http2/wire/stream.js';

const method = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (v: unknown) => v as Buffer,
});
const router = new Router();
router.add({ Hello: method('/demo.Greeter/Hello') } as never, { Hello: () => {} });
const handle = streamHandler(router, {} as CallShared);

function answered(headers: Partial<RequestHeaders>): Record<string, unknown> {
  const respond = vi.fn();
  const stream = { respond } as unknown as H2Stream;
  const request = {
    ':method': 'POST',
    ':path': '/demo.Greeter/Hello',
    'content-type': 'application/grpc',
    te: 'trailers',
    ...headers,
  } as RequestHeaders;
  handle(stream, request, [], {} as SessionState);
  expect(respond).toHaveBeenCalledTimes(1);
  const [fields, endStream] = respond.mock.calls[0] as [Record<string, unknown>, boolean];
  expect(endStream).toBe(true);
  return fields;
}
const grpcRefusal = (status: number, message: string, extra: Record<string, string> = {}) => ({
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-status': String(status),
  'grpc-message': message,
  ...extra,
});

describe('streamHandler refuses before any call starts', () => {
  it('a method other than POST: HTTP 405 allowing POST', () => {
    expect(answered({ ':method': 'GET' })).toEqual({ ':status': 405, allow: 'POST' });
  });

  it.each(['application/json', undefined, 'application/grpc+json'])('content-type %s: HTTP 415', (contentType) => {
    expect(answered({ 'content-type': contentType })).toEqual({
      ':status': 415,
      'accept-post': 'application/grpc, application/grpc+proto',
    });
  });

  it('takes application/grpc+proto as gRPC', () => {
    expect(answered({ 'content-type': 'application/grpc+proto', ':path': '/demo.Greeter/Nope' })['grpc-status']).toBe(
      String(GrpcStatus.UNIMPLEMENTED),
    );
  });

  it('no "te: trailers": INTERNAL, saying why', () => {
    expect(answered({ te: undefined })).toEqual(
      grpcRefusal(GrpcStatus.INTERNAL, 'missing "te: trailers" request header (a proxy on the way may not forward trailers)'),
    );
  });

  it("an unknown method or service: UNIMPLEMENTED with the router's message", () => {
    expect(answered({ ':path': '/demo.Greeter/Nope' })).toEqual(
      grpcRefusal(GrpcStatus.UNIMPLEMENTED, 'unknown method Nope of service demo.Greeter'),
    );
    expect(answered({ ':path': '/other.Svc/M' })['grpc-message']).toBe('unknown service other.Svc (method /other.Svc/M)');
  });

  it('an unsupported grpc-encoding: UNIMPLEMENTED naming what is supported, in grpc-accept-encoding too', () => {
    const fields = answered({ 'grpc-encoding': 'br' });
    expect(fields['grpc-status']).toBe(String(GrpcStatus.UNIMPLEMENTED));
    expect(fields['grpc-message']).toMatch(/^grpc-encoding br is not supported; supported: identity,/);
    expect(fields['grpc-accept-encoding']).toMatch(/^identity,/);
  });

  it('a malformed grpc-timeout: INTERNAL, quoting it', () => {
    expect(answered({ 'grpc-timeout': '10x' })).toEqual(grpcRefusal(GrpcStatus.INTERNAL, 'malformed grpc-timeout "10x"'));
  });
});

describe('refuseCall', () => {
  it('ends the stream with a trailers-only response, the message percent-encoded where gRPC says (a %, not a space), extra headers kept', () => {
    const respond = vi.fn();
    refuseCall({ respond } as unknown as H2Stream, GrpcStatus.RESOURCE_EXHAUSTED, 'full: 100%', { 'retry-after': '1' });
    expect(respond).toHaveBeenCalledWith(grpcRefusal(GrpcStatus.RESOURCE_EXHAUSTED, 'full: 100%25', { 'retry-after': '1' }), true);
  });
});
