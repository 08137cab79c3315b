import type { Buffer } from 'node:buffer';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { nodeHttp, nodeHttps } from '../base/optional-deps.js';
import type { Logger } from '../base/log.js';
import { type HttpPortLimits, headDeadline, listenHttp } from '../base/http-listen.js';
import { ConnectionGuard, DISCOVERY_MAX_CONNECTIONS } from '../base/connection-guard.js';
import { IDLE_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, MAX_HEADERS_COUNT, MAX_HEADER_BYTES, REQUEST_TIMEOUT_MS } from './defaults.js';
import type { JwksRequestHandler } from './handler.js';
import type { HandedPort } from '../base/handed-port.js';

/** The discovery port, bound. @internal */
export interface DiscoveryEndpoint {
  readonly port: number;
  /** /healthz and /readyz answer 503 from now on; the documents are still served. */
  drain(): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** What {@link serveDiscovery} needs. @internal */
export interface DiscoveryServerOptions {
  readonly host: string;
  readonly port: number;
  readonly documents: JwksRequestHandler;
  /** The token endpoint (`POST /token`, RFC 8693), with a trust file: the one route that reads a request body, bounded. */
  readonly token?: JwksRequestHandler | undefined;
  /** The gRPC server's certificate and key: the port serves HTTPS. No client certificate is asked for: the documents are public. */
  readonly tls?: { readonly key: string | Buffer; readonly cert: string | Buffer };
  readonly logger: Logger;
  /** False while the active signing keys cannot sign: /readyz answers 503. Default: always ready. */
  readonly ready?: () => boolean;
  /** The server's handshake deadline (a TLS handshake, then the request head), and where refusals are counted. */
  readonly ports: HttpPortLimits;
  /** A cluster worker's: the primary holds the port and hands each connection over (`host` and `port` are then the primary's). */
  readonly handed?: HandedPort | undefined;
}

const PLAIN = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };

/**
 * Serves the discovery documents, `/healthz` and `/readyz` on `host:port` (0: any free
 * port; a cluster worker takes the connections its primary hands over). Slow and idle clients are timed
 * out, oversized heads refused (431), request bodies never read but the token endpoint's,
 * bounded (src/exchange/token-endpoint.ts). @internal
 */
export async function serveDiscovery(options: DiscoveryServerOptions): Promise<DiscoveryEndpoint> {
  const { host, port, documents, tls } = options;
  let draining = false;
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    try {
      if (options.token?.(request, response) === true) return;
      if (documents(request, response)) return;
    } catch (err) {
      // A document that cannot be built is one failed request, never a crashed process.
      options.logger.error('discovery: cannot answer', { error: err instanceof Error ? err.message : String(err) });
      if (!response.headersSent) response.writeHead(500, PLAIN).end('internal error\n');
      return;
    }
    const path = (request.url ?? '').split('?', 1)[0];
    if (path === '/healthz' || path === '/readyz') {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { ...PLAIN, allow: 'GET, HEAD' }).end('method not allowed: GET or HEAD\n');
        return;
      }
      // /readyz also says whether the active keys can sign (an HSM or KMS key whose breaker opened cannot); /healthz is liveness.
      const why = draining ? 'draining\n' : path === '/readyz' && options.ready?.() === false ? 'signing key unavailable\n' : undefined;
      response.writeHead(why === undefined ? 200 : 503, PLAIN).end(request.method === 'HEAD' ? undefined : (why ?? 'ok\n'));
      return;
    }
    response.writeHead(404, PLAIN).end('not found\n');
  };
  const { handshakeTimeoutMs } = options.ports;
  const guard = new ConnectionGuard({
    port: 'discovery',
    handshakeTimeoutMs,
    maxConnections: DISCOVERY_MAX_CONNECTIONS,
    peerSharePercent: options.ports.peerSharePercent,
    logger: options.logger,
    counters: options.ports.counters,
  });
  const limits = {
    // The request head within the port's deadline (slowloris), the whole request within REQUEST_TIMEOUT_MS.
    ...headDeadline(handshakeTimeoutMs, REQUEST_TIMEOUT_MS),
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    maxHeaderSize: MAX_HEADER_BYTES,
  };
  const server: Server =
    tls === undefined
      ? nodeHttp().createServer(limits, handle)
      : nodeHttps().createServer({ ...limits, key: tls.key, cert: tls.cert, handshakeTimeout: handshakeTimeoutMs }, handle);
  server.maxHeadersCount = MAX_HEADERS_COUNT;
  server.setTimeout(IDLE_TIMEOUT_MS, (socket) => socket.destroy());
  // Bad requests (400), heads over the limit (431) and timeouts (408, counted): answered as node:http would (listenHttp).
  const listener = await listenHttp(server, host, port, 'discovery', 'httpPort', guard, options.handed);
  return {
    port: listener.port,
    drain: () => {
      draining = true;
    },
    close: listener.close,
  };
}
