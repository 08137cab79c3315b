/** Plain HTTP(S) requests on loopback, as curl sends them: the discovery, status-list and metrics ports. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One HTTP/1.1 request to 127.0.0.1:`port` (HTTPS trusting `ca` when given), failing after `timeoutMs` of silence when given. */
export function fetchRaw(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; ca?: Buffer; body?: string; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  const send = options.ca === undefined ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
        ...(options.ca && { ca: options.ca, servername: 'localhost' }),
        ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${options.method ?? 'GET'} ${path} on port ${port}: no answer within ${options.timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
