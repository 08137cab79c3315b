import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JwtGrpcError } from './errors.js';

/** A node:http(s) server bound by {@link listenHttp}. @internal */
export interface HttpListener {
  readonly port: number;
  /** Stops accepting and ends every open connection, so a keep-alive client cannot hold the close up. */
  close(): Promise<void>;
}

/**
 * Binds `server` on `host:port` (0: any free port). A bind that fails rejects with
 * `ERR_LISTEN` naming what was to be served and the option whose port it was, so the
 * discovery and metrics endpoints fail the same way. @internal
 */
export async function listenHttp(server: Server, host: string, port: number, what: string, field: string): Promise<HttpListener> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new JwtGrpcError('ERR_LISTEN', `cannot serve ${what} on ${host}:${port}: ${err.code ?? err.message}`, { field, cause: err })),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
