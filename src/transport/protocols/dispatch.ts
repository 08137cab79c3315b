/**
 * An exchange that is not a gRPC call: a Connect or gRPC-Web call chosen by its
 * Content-Type (a Connect GET by its query), or a CORS preflight. Checks what each
 * protocol requires of the request, finds the method and starts the call, or answers
 * at once with the protocol's own error.
 */
import { Buffer } from 'node:buffer';
import { GrpcStatus, type GrpcStatusError, type StatusCode } from '../../contracts/handler-api.js';
import { requestEncoding } from '../http2/compression.js';
import { parseTimeout } from '../http2/protocol.js';
import type { Route, Router } from '../http2/router.js';
import { type MessageCodec, ProtocolCall, type ProtocolCallInit, type ProtocolShared } from './call.js';
import { CONNECT_ACCEPT_ENCODING, ConnectWire, connectEncoding, connectType, parseConnectGet, parseConnectTimeout } from './connect.js';
import { corsHeaders, preflight } from './cors.js';
import type { Exchange, ExchangeFields } from './exchange.js';
import { GrpcWebWire, grpcWebType } from './grpc-web.js';
import { jsonCodec, loadJsonMapping } from './json.js';
import type { ProtocolName, ProtocolWire } from './wire.js';

/** What a server serves beside gRPC: the protocols on, and the origins CORS lets call. */
export interface ProtocolSettings {
  readonly protocols: ReadonlySet<ProtocolName>;
  readonly corsAllowedOrigins: ReadonlySet<string>;
}

/** What the server gives every exchange it dispatches. */
export interface ProtocolServer extends ProtocolShared {
  readonly router: Router;
  readonly protocolSettings: ProtocolSettings;
}

/** The content types of the protocols on, for `accept-post` on a 415. */
function acceptedTypes(protocols: ReadonlySet<ProtocolName>): string {
  const types: string[] = [];
  if (protocols.has('grpc')) types.push('application/grpc', 'application/grpc+proto');
  if (protocols.has('grpc-web'))
    types.push('application/grpc-web', 'application/grpc-web+proto', 'application/grpc-web+json', 'application/grpc-web-text');
  if (protocols.has('connect'))
    types.push('application/proto', 'application/json', 'application/connect+proto', 'application/connect+json');
  return types.join(', ');
}

/** An HTTP answer with no protocol behind it (a method or a content type no protocol on serves). */
function answerHttp(exchange: Exchange, status: number, headers: ExchangeFields): void {
  exchange.respond(status, headers, true);
}

/** Answers `wire`'s error at once, before any call; `http` overrides the HTTP status and adds headers (Connect's 405). */
function refuse(
  exchange: Exchange,
  wire: ProtocolWire,
  status: StatusCode,
  details: string,
  extra: ExchangeFields,
  http?: { readonly status: number; readonly headers: ExchangeFields },
): void {
  const whole = wire.whole(status, details, undefined, undefined, undefined);
  let length = 0;
  for (const chunk of whole.body) length += chunk.length;
  exchange.respond(http?.status ?? whole.status, { ...whole.headers, ...extra, ...http?.headers, 'content-length': length });
  for (const chunk of whole.body) exchange.write(chunk);
  exchange.end();
}

/**
 * Serves one exchange that is not a gRPC call (../http2/dispatch.ts keeps gRPC's fast
 * path): a CORS preflight, a Connect call (POST, or GET for a method without side
 * effects) or a gRPC-Web call, each only when `server.protocolSettings` turns it on.
 *
 * @example
 * ```ts
 * // hidden: declare const exchange: Exchange, server: ProtocolServer;
 * serveExchange(exchange, server); // answers, or starts the call
 * ```
 */
export function serveExchange(exchange: Exchange, server: ProtocolServer): void {
  const settings = server.protocolSettings;
  const method = exchange.method;
  if (method === 'OPTIONS') {
    preflight(exchange, settings.corsAllowedOrigins);
    return;
  }
  const extra = corsHeaders(exchange.headers.origin, settings.corsAllowedOrigins);
  const protocols = settings.protocols;
  if (method === 'GET' && protocols.has('connect')) {
    serveGet(exchange, server, extra);
    return;
  }
  if (method !== 'POST') {
    answerHttp(exchange, 405, { allow: protocols.has('connect') ? 'POST, GET' : 'POST', ...extra });
    return;
  }
  const contentType = exchange.headers['content-type'] ?? '';
  const webType = protocols.has('grpc-web') ? grpcWebType(contentType) : undefined;
  if (webType !== undefined) {
    const encoding = requestEncoding(exchange.headers['grpc-encoding']);
    const wire = new GrpcWebWire(webType, encoding ?? 'identity', exchange.headers['grpc-accept-encoding'], server.maxReceiveMessageBytes);
    if (encoding === undefined) {
      refuse(exchange, wire, GrpcStatus.UNIMPLEMENTED, `grpc-encoding ${exchange.headers['grpc-encoding']} is not supported`, extra);
      return;
    }
    startCall(exchange, server, wire, webType.codec, 'grpc-timeout', extra);
    return;
  }
  const type = protocols.has('connect') ? connectType(contentType) : undefined;
  if (type === undefined) {
    answerHttp(exchange, 415, { 'accept-post': acceptedTypes(protocols), ...extra });
    return;
  }
  const encodingHeader = type.streaming ? 'connect-content-encoding' : 'content-encoding';
  const acceptHeader = type.streaming ? 'connect-accept-encoding' : 'accept-encoding';
  const encoding = connectEncoding(exchange.headers[encodingHeader]);
  const maxBytes = server.maxReceiveMessageBytes;
  const wire = new ConnectWire(type, encoding ?? 'identity', exchange.headers[acceptHeader], {
    kind: type.streaming ? 'envelopes' : 'body',
    maxBytes,
  });
  if (encoding === undefined) {
    // The specification: unimplemented, naming the supported encodings in the accept header.
    const details = `${encodingHeader} ${exchange.headers[encodingHeader]} is not supported; supported: ${CONNECT_ACCEPT_ENCODING}`;
    refuse(exchange, wire, GrpcStatus.UNIMPLEMENTED, details, extra);
    return;
  }
  startCall(exchange, server, wire, type.codec, 'connect-timeout-ms', extra);
}

/** A Connect GET: only for a method without side effects; its answer carries an ETag and Cache-Control. */
function serveGet(exchange: Exchange, server: ProtocolServer, extra: ExchangeFields): void {
  const route = server.router.get(exchange.path);
  let get: ReturnType<typeof parseConnectGet>;
  // Errors before the call are Connect's JSON errors, whatever the query asked for.
  const errorWire = new ConnectWire({ codec: 'json', streaming: false }, 'identity', undefined, {
    kind: 'query',
    message: Buffer.alloc(0),
  });
  if (route !== undefined && route.definition.noSideEffects !== true) {
    // The specification: a GET of a method with side effects is answered 405.
    const details = `${route.path} has side effects: call it by POST`;
    refuse(exchange, errorWire, GrpcStatus.UNIMPLEMENTED, details, extra, { status: 405, headers: { allow: 'POST' } });
    return;
  }
  try {
    get = parseConnectGet(exchange.query);
  } catch (err) {
    const status = (err as GrpcStatusError).status ?? GrpcStatus.INVALID_ARGUMENT;
    refuse(exchange, errorWire, status, (err as Error).message, extra);
    return;
  }
  const wire = new ConnectWire(get.type, get.encoding, exchange.headers['accept-encoding'], { kind: 'query', message: get.message });
  const cache =
    route === undefined
      ? undefined
      : { ifNoneMatch: exchange.headers['if-none-match'], cacheControl: route.definition.cacheControl ?? 'no-cache' };
  startCall(exchange, server, wire, get.type.codec, 'connect-timeout-ms', extra, cache);
}

/** Checks what every call of the protocols needs (method, version, deadline, codec) and starts it. */
function startCall(
  exchange: Exchange,
  server: ProtocolServer,
  wire: ProtocolWire,
  codecName: 'proto' | 'json',
  timeoutHeader: 'grpc-timeout' | 'connect-timeout-ms',
  extraHeaders: ExchangeFields,
  get?: ProtocolCallInit['get'],
): void {
  const route = server.router.get(exchange.path);
  if (route === undefined) {
    // A Connect unary call to a path nothing serves is 404, which Connect clients read as
    // unimplemented (the specification's HTTP to error code mapping), as connect-go answers it.
    const notFound = wire.protocol === 'connect' && !wire.streaming ? { status: 404, headers: {} } : undefined;
    refuse(exchange, wire, GrpcStatus.UNIMPLEMENTED, server.router.unknownPathMessage(exchange.path), extraHeaders, notFound);
    return;
  }
  const version = exchange.headers['connect-protocol-version'];
  if (wire.protocol === 'connect' && version !== undefined && version !== '1') {
    refuse(
      exchange,
      wire,
      GrpcStatus.INVALID_ARGUMENT,
      `connect-protocol-version ${version} is not supported (this server speaks 1)`,
      extraHeaders,
    );
    return;
  }
  const timeout = exchange.headers[timeoutHeader];
  const timeoutMs =
    timeout === undefined
      ? Number.POSITIVE_INFINITY
      : timeoutHeader === 'grpc-timeout'
        ? parseTimeout(timeout)
        : parseConnectTimeout(timeout);
  if (Number.isNaN(timeoutMs)) {
    // gRPC-Web as gRPC: a header outside the grammar is INTERNAL; Connect names it invalid_argument.
    const status = wire.protocol === 'connect' ? GrpcStatus.INVALID_ARGUMENT : GrpcStatus.INTERNAL;
    refuse(exchange, wire, status, `malformed ${timeoutHeader} ${JSON.stringify(timeout)}`, extraHeaders);
    return;
  }
  const init = { route, wire, timeoutMs, timeoutHeader, extraHeaders, ...(get !== undefined && { get }) };
  if (codecName === 'proto') {
    new ProtocolCall(exchange, { ...init, codec: protoCodec(route) }, server).start();
    return;
  }
  // The JSON mapping loads with the first JSON call (an async import, so that gRPC calls
  // are not held while it loads); the exchange keeps the body that comes meanwhile.
  const loading = loadJsonMapping();
  if (loading === undefined) startJsonCall(exchange, server, init);
  else
    loading.then(
      () => startJsonCall(exchange, server, init),
      (err: unknown) => refuseJson(exchange, init, GrpcStatus.INTERNAL, `the JSON mapping could not be loaded: ${(err as Error).message}`),
    );
}

/** Starts a call in JSON once the mapping is loaded, unless the client has gone meanwhile. */
function startJsonCall(exchange: Exchange, server: ProtocolServer, init: Omit<ProtocolCallInit, 'codec'>): void {
  if (exchange.closed) return;
  const codec = jsonCodec(init.route);
  if (codec === undefined) {
    refuseJson(
      exchange,
      init,
      GrpcStatus.UNIMPLEMENTED,
      `${init.route.path} has no JSON mapping (its service is not in the descriptor set): call it in protobuf`,
    );
    return;
  }
  new ProtocolCall(exchange, { ...init, codec }, server).start();
}

function refuseJson(exchange: Exchange, init: Omit<ProtocolCallInit, 'codec'>, status: StatusCode, details: string): void {
  if (!exchange.closed) refuse(exchange, init.wire, status, details, init.extraHeaders);
}

/** A method's own protobuf codecs: the fast path, as gRPC uses them. */
function protoCodec(route: Route): MessageCodec {
  const definition = route.definition;
  return { decode: (bytes) => definition.requestDeserialize(bytes), encode: (message) => definition.responseSerialize(message) };
}
