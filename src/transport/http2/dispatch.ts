/**
 * A new HTTP/2 stream: checks the request headers the protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md) requires, finds
 * the method and starts the call, or answers at once.
 */
import { GrpcStatus, type StatusCode } from '../../contracts/handler-api.js';
import { type CallShared, Http2Call } from './call.js';
import { ACCEPT_ENCODING, requestEncoding } from './compression.js';
import { parseTimeout, percentEncode } from './protocol.js';
import type { Router } from './router.js';
import { type ProtocolServer, serveExchange } from '../protocols/dispatch.js';
import { H2Exchange } from './exchange-adapter.js';
import type { StreamHandler } from './session.js';
import type { H2Stream } from './wire/stream.js';

/** An HTTP error before any gRPC: the protocol document's 415 for a non-gRPC content-type, 405 for a non-POST method. */
function refuseHttp(stream: H2Stream, status: number, extra: Record<string, string> = {}): void {
  stream.respond({ ':status': status, ...extra }, true);
}

/** A Trailers-Only error response: one HEADERS frame with END_STREAM (then RST_STREAM NO_ERROR if the client is still sending: wire/connection.ts). */
export function refuseCall(stream: H2Stream, status: StatusCode, message: string, extra: Record<string, string> = {}): void {
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(status), 'grpc-message': percentEncode(message), ...extra },
    true,
  );
}

/**
 * The connection's handler of new streams for a server serving `router`. A gRPC call is
 * told by its method and content type first, and takes the fast path below; with
 * `protocols` (Connect, gRPC-Web, CORS on), every other request goes to them
 * (../protocols/dispatch.ts), on an exchange.
 */
export function streamHandler(router: Router, shared: CallShared, protocols?: ProtocolServer): StreamHandler {
  const grpcOn = protocols === undefined || protocols.protocolSettings.protocols.has('grpc');
  return (stream, headers, rawHeaders, session) => {
    const contentType = headers['content-type'];
    const grpc = headers[':method'] === 'POST' && (contentType === 'application/grpc' || contentType === 'application/grpc+proto');
    if (!grpc || !grpcOn) {
      if (protocols !== undefined) serveExchange(new H2Exchange(stream, headers, rawHeaders, session), protocols);
      else if (headers[':method'] !== 'POST') refuseHttp(stream, 405, { allow: 'POST' });
      else refuseHttp(stream, 415, { 'accept-post': 'application/grpc, application/grpc+proto' });
      return;
    }
    // RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) lets "te" carry only "trailers" (the connection resets any other value); the
    // protocol document requires it, to detect proxies that would drop the trailers.
    if (headers.te !== 'trailers') {
      refuseCall(stream, GrpcStatus.INTERNAL, 'missing "te: trailers" request header (a proxy on the way may not forward trailers)');
      return;
    }
    const path = headers[':path'];
    const route = router.get(path);
    if (route === undefined) {
      refuseCall(stream, GrpcStatus.UNIMPLEMENTED, router.unknownPathMessage(path));
      return;
    }
    const encodingHeader = headers['grpc-encoding'];
    const encoding = requestEncoding(encodingHeader);
    if (encoding === undefined) {
      // doc/compression.md (https://github.com/grpc/grpc/blob/master/doc/compression.md): UNIMPLEMENTED, naming what is supported in grpc-accept-encoding.
      refuseCall(stream, GrpcStatus.UNIMPLEMENTED, `grpc-encoding ${encodingHeader} is not supported; supported: ${ACCEPT_ENCODING}`, {
        'grpc-accept-encoding': ACCEPT_ENCODING,
      });
      return;
    }
    let timeoutMs = Number.POSITIVE_INFINITY;
    const timeout = headers['grpc-timeout'];
    if (timeout !== undefined) {
      timeoutMs = parseTimeout(timeout);
      if (Number.isNaN(timeoutMs)) {
        // The library never generates INVALID_ARGUMENT (status code document): a header
        // outside the protocol's grammar is INTERNAL.
        refuseCall(stream, GrpcStatus.INTERNAL, `malformed grpc-timeout ${JSON.stringify(timeout)}`);
        return;
      }
    }
    new Http2Call(stream, route, shared, session, headers, rawHeaders, encoding, timeoutMs).start();
  };
}
