/**
 * A new HTTP/2 stream: checks the request headers the protocol document requires, finds
 * the method and starts the call, or answers at once.
 */
import { type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream, constants as http2Constants } from 'node:http2';
import { Status, type StatusCode } from '../service.js';
import { type CallShared, Http2Call } from './call.js';
import { ACCEPT_ENCODING, requestEncoding } from './compression.js';
import { parseTimeout, percentEncode } from './protocol.js';
import type { Router } from './router.js';
import { SessionState } from './session.js';

/** An HTTP error before any gRPC: the protocol document's 415 for a non-gRPC content-type, 405 for a non-POST method. */
function refuseHttp(stream: ServerHttp2Stream, status: number, extra: Record<string, string> = {}): void {
  stream.respond({ ':status': status, ...extra }, { endStream: true });
  if (!stream.endAfterHeaders) stream.close(http2Constants.NGHTTP2_NO_ERROR);
}

/** A Trailers-Only error response: one HEADERS frame with END_STREAM, then RST_STREAM NO_ERROR if the client is still sending. */
export function refuseCall(stream: ServerHttp2Stream, status: StatusCode, message: string, extra: Record<string, string> = {}): void {
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(status), 'grpc-message': percentEncode(message), ...extra },
    { endStream: true },
  );
  if (!stream.endAfterHeaders) stream.close(http2Constants.NGHTTP2_NO_ERROR);
}

/**
 * Every stream's 'error' listener, from its first moment. node:http2 emits a peer's
 * protocol error on a stream (a second HEADERS or a CONTINUATION on a stream already
 * half-closed, e.g. one refused with 405) as an 'error' event, and an 'error' without a
 * listener ends the process. The error needs no handling of its own: the stream closes,
 * and a call on it ends in its 'close' (call.ts).
 */
function ignoreStreamError(): void {}

/** node:http2's 'stream' listener for a server serving `router`. */
export function streamHandler(
  router: Router,
  shared: CallShared,
): (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void {
  return (stream, headers, _flags, rawHeaders) => {
    stream.on('error', ignoreStreamError);
    // Nothing below may throw into node:http2: a stream already reset is just dropped.
    if (stream.destroyed || stream.closed) return;
    if (headers[':method'] !== 'POST') {
      refuseHttp(stream, 405, { allow: 'POST' });
      return;
    }
    const contentType = headers['content-type'];
    if (contentType !== 'application/grpc' && contentType !== 'application/grpc+proto') {
      refuseHttp(stream, 415, { 'accept-post': 'application/grpc, application/grpc+proto' });
      return;
    }
    // RFC 9113 lets "te" carry only "trailers" (node:http2 resets any other value); the
    // protocol document requires it, to detect proxies that would drop the trailers.
    if (headers.te !== 'trailers') {
      refuseCall(stream, Status.INTERNAL, 'missing "te: trailers" request header (a proxy on the way may not forward trailers)');
      return;
    }
    const path = headers[':path'];
    const route = router.get(path);
    if (route === undefined) {
      refuseCall(stream, Status.UNIMPLEMENTED, router.unknownPathMessage(path));
      return;
    }
    const encodingHeader = headers['grpc-encoding'] as string | undefined;
    const encoding = requestEncoding(encodingHeader);
    if (encoding === undefined) {
      // doc/compression.md: UNIMPLEMENTED, naming what is supported in grpc-accept-encoding.
      refuseCall(stream, Status.UNIMPLEMENTED, `grpc-encoding ${encodingHeader} is not supported; supported: ${ACCEPT_ENCODING}`, {
        'grpc-accept-encoding': ACCEPT_ENCODING,
      });
      return;
    }
    let timeoutMs = Number.POSITIVE_INFINITY;
    const timeout = headers['grpc-timeout'] as string | undefined;
    if (timeout !== undefined) {
      timeoutMs = parseTimeout(timeout);
      if (Number.isNaN(timeoutMs)) {
        // The library never generates INVALID_ARGUMENT (status code document): a header
        // outside the protocol's grammar is INTERNAL.
        refuseCall(stream, Status.INTERNAL, `malformed grpc-timeout ${JSON.stringify(timeout)}`);
        return;
      }
    }
    const session = stream.session === undefined ? undefined : SessionState.of(stream.session as ServerHttp2Session);
    if (session === undefined) {
      refuseCall(stream, Status.UNAVAILABLE, 'the connection is closing');
      return;
    }
    new Http2Call(stream, route, shared, session, headers, rawHeaders, encoding, timeoutMs).start();
  };
}
