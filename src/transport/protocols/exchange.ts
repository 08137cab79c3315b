/**
 * One HTTP request and its response, whatever HTTP version carries it: what the protocols
 * served beside gRPC (Connect, gRPC-Web: ./connect.ts, ./grpc-web.ts) need of a
 * transport, so that they never depend on HTTP/2. The own HTTP/2 transport adapts a stream
 * to it (../http2/exchange-adapter.ts); an HTTP/1.1 server adapts node:http's request and
 * response the same way.
 *
 * The protocol above owns the meaning (statuses, limits, deadlines); the exchange only
 * moves bytes, with back-pressure both ways, and tells what happened to the connection.
 */
import type { Buffer } from 'node:buffer';
import type { CallerIdentity, StatusCode } from '../../contracts/handler-api.js';

/** The HTTP version an exchange arrived on: ALPN's names (RFC 7301 registry). */
export type ExchangeHttpVersion = 'http/1.1' | 'h2';

/** An outgoing header or trailer block: lower-case names; several values of one name as an array. */
export type ExchangeFields = Readonly<Record<string, string | readonly string[] | number>>;

/** Who sent the request: the connection's side of it. */
export interface ExchangePeer {
  /** `ip:port` of the client. */
  readonly address: string;
  /** The caller a verified TLS client certificate names (mutual TLS); undefined without one. Read once per connection. */
  readonly caller: CallerIdentity | undefined;
  /** The HTTP version of the connection. */
  readonly httpVersion: ExchangeHttpVersion;
}

/**
 * What the exchange tells the one protocol call it carries. Every method is called on the
 * event loop's turn of the event; none may throw (a protocol answers errors itself).
 */
export interface ExchangeListener {
  /**
   * A chunk of the request body: a view of the transport's read buffer, valid only during
   * the call (copy what you keep). The transport counts unreleased bytes against its
   * memory ceiling until {@link Exchange.release}.
   */
  data(chunk: Buffer): void;
  /** The request body is complete. */
  end(): void;
  /** {@link Exchange.write} returned false earlier, and the exchange can take more now. */
  drained(): void;
  /**
   * The transport ends the exchange before its response is out: the request was not whole
   * within the server's request deadline (`DEADLINE_EXCEEDED`), or the server is closing
   * (`UNAVAILABLE`). `respondable`: the protocol may still answer with that status (the
   * request deadline); false when the transport aborts right after (server closing).
   */
  interrupted(status: StatusCode, details: string, respondable: boolean): void;
  /** The exchange is over: the response is out, or the client or the connection went. Called once. */
  closed(): void;
}

/**
 * One HTTP request/response exchange.
 *
 * @example
 * ```ts
 * // An exchange answered at once, without reading its body.
 * function notFound(exchange: Exchange): void {
 *   exchange.respond(404, { 'content-type': 'text/plain' });
 *   exchange.end();
 * }
 * ```
 */
export interface Exchange {
  /** The request method, upper case (`POST`, `GET`, `OPTIONS`). */
  readonly method: string;
  /** The path, without the query (`/jwt.services.JwtService/GetJwks`). */
  readonly path: string;
  /** The query without its `?` (`connect=v1&encoding=json&message=...`); '' when none. */
  readonly query: string;
  /** The request headers, names lower case; a repeated header's values joined with ", ". */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The request header list as received: name, value, name, value... (names lower case); for call metadata. */
  readonly rawHeaders: readonly string[];
  readonly peer: ExchangePeer;
  /** True once the request body is complete (or there was none). */
  readonly requestEnded: boolean;
  /** True once the exchange is over (response out, or aborted). */
  readonly closed: boolean;
  /** Takes the request body: `listener` gets its chunks, its end, and what happens to the exchange. Called once. */
  listen(listener: ExchangeListener): void;
  /** Back-pressure on the request: stop reading the body (the client's window closes) ... */
  pause(): void;
  /** ... and read it again. */
  resume(): void;
  /** The body bytes received so far are no longer held by the protocol (a whole message was taken). */
  release(): void;
  /** Sends the status line and headers. `endStream`: the response has no body and no trailers (it is over). */
  respond(status: number, headers: ExchangeFields, endStream?: boolean): void;
  /**
   * Sends the status line, the headers and the whole body, and ends the response: a unary
   * answer. HTTP/1.1 hands node:http the head and the body in one call (one socket write);
   * HTTP/2 writes HEADERS, DATA and END_STREAM as {@link respond}, {@link write} and {@link end} would.
   */
  respondWhole(status: number, headers: ExchangeFields, body: Buffer): void;
  /** Writes body bytes after {@link respond}; false when the exchange holds more than its high-water mark (`drained` follows). */
  write(chunk: Buffer, second?: Buffer): boolean;
  /** Ends the response after the body written, with HTTP trailers when given (HTTP/2; dropped by HTTP/1.1 without chunked trailers). */
  end(trailers?: ExchangeFields): void;
  /** Aborts the exchange now (HTTP/2: RST_STREAM CANCEL; HTTP/1.1: the socket closes). */
  abort(): void;
}
