import { JwtGrpcError } from './errors.js';

/**
 * `host:port` or `[v6]:port` -> host and port, or `ERR_LISTEN` naming the address: what a
 * server binds, and a cluster's primary for its workers. @internal
 */
export function parseAddress(address: string): { host: string; port: number } {
  const match = typeof address === 'string' ? /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address) : null;
  const port = match === null ? Number.NaN : Number(match[3]);
  if (match === null || port > 65_535) {
    throw new JwtGrpcError('ERR_LISTEN', `listen: address must be "host:port" or "[v6]:port", got ${JSON.stringify(address)}`, {
      field: 'address',
    });
  }
  return { host: (match[1] ?? match[2]) as string, port };
}

/** The gRPC port's `address` cannot be bound: the error every binder of it throws (a server, a cluster's primary). @internal */
export function cannotListen(address: string, err: Error): JwtGrpcError {
  return new JwtGrpcError('ERR_LISTEN', `cannot listen on ${address}: ${err.message}`, { field: 'address', cause: err });
}
