/**
 * CORS (https://fetch.spec.whatwg.org/#http-cors-protocol) for the browser protocols:
 * off unless the server names the origins it lets call. An origin not named gets no CORS
 * header at all (the browser then keeps the answer from the page), and its preflight 403.
 */
import type { Exchange, ExchangeFields } from './exchange.js';
import { CORS_MAX_AGE_SECONDS } from './defaults.js';

/** Request headers the protocols need a browser to send (Connect's, gRPC-Web's, and a bearer token). */
export const CORS_ALLOWED_HEADERS = [
  'content-type',
  'connect-protocol-version',
  'connect-timeout-ms',
  'connect-content-encoding',
  'connect-accept-encoding',
  'content-encoding',
  'accept-encoding',
  'grpc-timeout',
  'grpc-encoding',
  'grpc-accept-encoding',
  'x-grpc-web',
  'x-user-agent',
  'authorization',
].join(', ');

/** Response headers a page may read: the status of gRPC-Web's trailers-only answers, the encodings, the cache validators. */
export const CORS_EXPOSED_HEADERS = [
  'grpc-status',
  'grpc-message',
  'grpc-status-details-bin',
  'grpc-encoding',
  'grpc-accept-encoding',
  'connect-content-encoding',
  'connect-accept-encoding',
  'content-encoding',
  'etag',
].join(', ');

/** The answers without CORS headers, shared by every call (headers are only read, spread into the answer's). */
const NO_CORS_HEADERS: ExchangeFields = Object.freeze({});
const VARY_ORIGIN: ExchangeFields = Object.freeze({ vary: 'origin' });

/**
 * The CORS headers of an answer to `origin`: none when it is not allowed (or absent).
 *
 * @example
 * ```ts
 * corsHeaders('https://app.example', new Set(['https://app.example']))['access-control-allow-origin']; // 'https://app.example'
 * ```
 */
export function corsHeaders(origin: string | undefined, allowed: ReadonlySet<string>): ExchangeFields {
  if (origin === undefined || !allowed.has(origin)) return allowed.size === 0 ? NO_CORS_HEADERS : VARY_ORIGIN;
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': CORS_EXPOSED_HEADERS, vary: 'origin' };
}

/**
 * Answers an OPTIONS request: a preflight from an allowed origin gets 204 with what the
 * protocols need; one from any other origin 403 without CORS headers; an OPTIONS that is
 * no preflight 405.
 *
 * @example
 * ```ts
 * // hidden: declare const exchange: Exchange;
 * preflight(exchange, new Set(['https://app.example']));
 * ```
 */
export function preflight(exchange: Exchange, allowed: ReadonlySet<string>): void {
  const origin = exchange.headers.origin;
  const requested = exchange.headers['access-control-request-method'];
  if (origin === undefined || requested === undefined) {
    exchange.respond(405, { allow: 'POST, GET' }, true);
    return;
  }
  if (!allowed.has(origin) || (requested !== 'POST' && requested !== 'GET')) {
    exchange.respond(403, { vary: 'origin' }, true);
    return;
  }
  exchange.respond(
    204,
    {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'POST, GET',
      'access-control-allow-headers': CORS_ALLOWED_HEADERS,
      'access-control-max-age': CORS_MAX_AGE_SECONDS,
      vary: 'origin',
    },
    true,
  );
}
