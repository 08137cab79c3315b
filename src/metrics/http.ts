import type { Server } from 'node:http';
import { nodeHttp } from '../base/optional-deps.js';
import { type HttpListener, type HttpPortLimits, headDeadline, listenHttp } from '../base/http-listen.js';
import type { Logger } from '../base/log.js';
import { ConnectionGuard, METRICS_MAX_CONNECTIONS } from '../base/connection-guard.js';
import { metricsContentType } from './server-metrics.js';

/** A scrape's request must be whole within this long (it has no body: the head is the request). */
const METRICS_REQUEST_TIMEOUT_MS = 15_000;
/**
 * How long a scraper's connection may stay open between requests: node:http's own default,
 * named, since a scraper asks every 15 s or more (Prometheus's scrape_interval defaults to
 * 1 m) and an idle connection holds one of the port's few slots.
 */
const METRICS_KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** A bound `/metrics` endpoint. @internal */
export type MetricsEndpoint = HttpListener;

/**
 * The host of a gRPC listen address (`127.0.0.1:50051`, `[::1]:0`, `0.0.0.0:0`): metrics
 * are served on the interface the service is. @internal
 */
export function hostOf(address: string): string {
  const host = address.slice(0, address.lastIndexOf(':'));
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Serves `GET /metrics` on `host:port` (0: any free port) with the text `render` makes at
 * each scrape; anything else is 404. A failed render is a 500 naming no more than its message. @internal
 */
export async function serveMetrics(
  host: string,
  port: number,
  render: () => Promise<string>,
  logger: Logger,
  ports: HttpPortLimits,
): Promise<MetricsEndpoint> {
  const guard = new ConnectionGuard({
    port: 'metrics',
    handshakeTimeoutMs: ports.handshakeTimeoutMs,
    maxConnections: METRICS_MAX_CONNECTIONS,
    peerSharePercent: ports.peerSharePercent,
    logger,
    counters: ports.counters,
  });
  const server: Server = nodeHttp().createServer(
    { ...headDeadline(ports.handshakeTimeoutMs, METRICS_REQUEST_TIMEOUT_MS), keepAliveTimeout: METRICS_KEEP_ALIVE_TIMEOUT_MS },
    (request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: metrics are at GET /metrics\n');
        return;
      }
      render().then(
        (text) => response.writeHead(200, { 'content-type': metricsContentType() }).end(request.method === 'HEAD' ? undefined : text),
        (err: unknown) => {
          logger.error('metrics scrape failed', { error: err instanceof Error ? err.message : String(err) });
          response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
        },
      );
    },
  );
  return listenHttp(server, host, port, 'metrics', 'metricsPort', guard);
}
