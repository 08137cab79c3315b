import { Server, ServerCredentials } from '@grpc/grpc-js';
import { JwtGrpcError } from '../errors.js';
import { generateKeys } from '../keys/generate.js';
import type { KeySet } from '../keys/key-set.js';
import { type JwtServiceHandle, addResolvedJwtService } from '../service/add.js';
import { type JwtServiceOptions, resolveServiceOptions } from '../service/options.js';
import { type TransportOptions, applyHttp2ServerOptions, serverChannelOptions } from './channel-options.js';
import { type SetServing, addHealth } from './health.js';
import { addReflection } from './reflection.js';

/** Options of {@link createJwtServer}: the service's, the transport's, and the extras. */
export interface JwtServerOptions extends Omit<JwtServiceOptions, 'keys'>, TransportOptions {
  /** Keys to use. Default: one ephemeral key per algorithm, generated at listen and logged as a warning. */
  readonly keys?: KeySet;
  /** Serve grpc.health.v1.Health. Default true. */
  readonly health?: boolean;
  /** Serve gRPC server reflection. Default true. */
  readonly reflection?: boolean;
}

/** A JwtService server; owns its grpc-js Server and releases it on close. */
export interface JwtServer extends AsyncDisposable {
  /** The underlying grpc-js server, for adding your own services before `listen`. */
  readonly grpcServer: Server;
  /** JwtService's handle (keys, rotation); available once `listen` has resolved. */
  readonly service: JwtServiceHandle;
  /**
   * Loads keys (or generates ephemeral ones), binds `address` (`host:port`; port 0 picks a
   * free one) and starts serving. Resolves to the bound port.
   */
  listen(address: string, credentials?: ServerCredentials): Promise<number>;
  /**
   * Stops accepting calls, lets calls in flight finish, and forces the rest closed after
   * `graceMs` (default 10000). Idempotent.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Creates a gRPC server carrying `jwt.services.JwtService`, health and reflection, with
 * options validated now (an invalid one throws `JwtGrpcError` naming it).
 *
 * @example
 * ```ts
 * import { createJwtServer, loadKeys } from 'jwt-grpc';
 *
 * await using server = createJwtServer({ keys: await loadKeys('keys.json'), subjects: ['ada@example.com'] });
 * const port = await server.listen('127.0.0.1:0');
 * ```
 */
export function createJwtServer(options: JwtServerOptions = {}): JwtServer {
  const serviceOptions = resolveServiceOptions(options, true);
  const grpcServer = new Server(serverChannelOptions(options));
  if (!applyHttp2ServerOptions(grpcServer)) {
    serviceOptions.logger.warn('cannot raise the HTTP/2 stream reset limits on this @grpc/grpc-js: clients with many expiring deadlines may lose connections');
  }
  const setServing: SetServing | undefined = options.health === false ? undefined : addHealth(grpcServer);
  if (options.reflection !== false) addReflection(grpcServer, setServing !== undefined);

  let state: 'created' | 'listening' | 'listened' | 'closed' = 'created';
  let service: JwtServiceHandle | undefined;
  let closing: Promise<void> | undefined;
  /** The address as bound ("host:0" with the port picked), the name grpc-js drains it by. */
  let boundAddress: string | undefined;

  async function listen(address: string, credentials = ServerCredentials.createInsecure()): Promise<number> {
    if (state !== 'created') throw new JwtGrpcError('ERR_SERVER_STATE', `listen: server is already ${state}`);
    state = 'listening';
    let keys = serviceOptions.keys;
    if (keys === undefined) {
      keys = await generateKeys();
      serviceOptions.logger.warn(
        'no keys configured: generated EPHEMERAL keys in memory; tokens will not verify after a restart ' +
          'or on another instance. Configure keys for production.',
        { kids: keys.keys.map((key) => key.kid) },
      );
    }
    service = addResolvedJwtService(grpcServer, serviceOptions, keys);
    const port = await new Promise<number>((resolve, reject) => {
      grpcServer.bindAsync(address, credentials, (err, boundPort) => {
        if (err === null) resolve(boundPort);
        else reject(new JwtGrpcError('ERR_LISTEN', `cannot listen on ${address}: ${err.message}`, { field: 'address', cause: err }));
      });
    }).catch((err: unknown) => {
      state = 'closed';
      throw err;
    });
    if ((state as string) === 'closed') throw new JwtGrpcError('ERR_SERVER_STATE', 'listen: server was closed while binding');
    state = 'listened';
    boundAddress = address.replace(/:0$/, `:${port}`);
    setServing?.('SERVING');
    return port;
  }

  function close({ graceMs = 10_000 }: { graceMs?: number } = {}): Promise<void> {
    if (closing !== undefined) return closing;
    state = 'closed';
    setServing?.('NOT_SERVING');
    closing = new Promise<void>((resolve) => {
      // grpc-js's forceShutdown only destroys the connections channelz tracks, and channelz
      // is off (channel-options.ts): drain cancels the calls still running after graceMs.
      if (boundAddress !== undefined) grpcServer.drain(boundAddress, graceMs);
      const force = setTimeout(() => {
        grpcServer.forceShutdown();
        resolve();
      }, graceMs);
      grpcServer.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    return closing;
  }

  return {
    grpcServer,
    get service(): JwtServiceHandle {
      if (service === undefined) throw new JwtGrpcError('ERR_SERVER_STATE', 'service: available once listen has resolved');
      return service;
    },
    listen,
    close,
    [Symbol.asyncDispose]: () => close(),
  };
}
