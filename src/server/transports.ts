/**
 * The two gRPC servers a JwtServer runs on, behind one small interface: jwt-grpc's own
 * (src/transport/http2/, HTTP/2 framed on node:net) and a @grpc/grpc-js `Server` through the adapter
 * (src/transport/grpc-js.ts). Everything transport-specific in createJwtServer is here.
 */
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { Server, ServerCredentials } from '@grpc/grpc-js';
import { JwtGrpcError } from '../base/errors.js';
import { grpcJs } from '../base/optional-deps.js';
import type { Logger } from '../base/log.js';
import type { ResolvedOptions } from '../options/resolve.js';
import { addServiceToGrpcJs } from '../transport/grpc-js.js';
import { createHttp2GrpcServer } from '../transport/http2/index.js';
import type { CallInterceptor, ServerTlsOptions, ServiceDescriptor, ServiceImplementation } from '../contracts/handler-api.js';
import { ConnectionGuard, type ConnectionCounters, defaultMaxConnections, openFilesLimit } from '../base/connection-guard.js';
import { applyHttp2ServerOptions, grpcJsMemoryLimits, serverChannelOptions } from './channel-options.js';
import { guardGrpcJsServer } from './grpc-js-connections.js';
import { guardGrpcJsMemory } from './grpc-js-memory.js';
import { guardGrpcJsDeadlines } from './grpc-js-deadlines.js';
import { type DeadlineCounters, PeerDeadlineReport } from '../base/peer-deadlines.js';
import type { HandedPort } from '../base/handed-port.js';
import { OpenSet } from '../base/open-set.js';
import { cannotListen } from '../base/address.js';

/** What createJwtServer needs of a transport. @internal */
export interface TransportServer {
  /** The grpc-js Server, on transport 'grpc-js' only. */
  readonly grpcServer: Server | undefined;
  addService(definition: ServiceDescriptor, implementation: ServiceImplementation): void;
  /** Binds and serves, or serves the connections `handed` brings (a cluster worker); rejects with `ERR_LISTEN` naming the address. */
  listen(address: string, tls: ServerTlsOptions | undefined, handed: HandedPort | undefined): Promise<number>;
  close(graceMs: number): Promise<void>;
}

interface TransportContext {
  readonly options: ResolvedOptions<'transport'>;
  readonly interceptors: readonly CallInterceptor[];
  readonly logger: Logger;
  /** Where failed handshakes and refused connections are counted; absent when metrics are off. */
  readonly counters: ConnectionCounters | undefined;
  /** Where requests timed out and connections closed idle or old are counted; absent when metrics are off. */
  readonly deadlineCounters: DeadlineCounters | undefined;
}

/** The transport the options name. @internal */
export function createTransport(context: TransportContext): TransportServer {
  return context.options.transport === 'grpc-js' ? grpcJsTransport(context) : http2Transport(context);
}

function http2Transport({ options, interceptors, logger, counters, deadlineCounters }: TransportContext): TransportServer {
  // The HTTP/2 tuning options (the table's `http2` rows) keep their defaults here.
  const server = createHttp2GrpcServer({
    maxReceiveMessageBytes: options.maxReceiveMessageBytes,
    maxConnectionAgeMs: options.maxConnectionAgeMs,
    maxConnectionAgeGraceMs: options.maxConnectionAgeGraceMs,
    maxConnectionIdleMs: options.maxConnectionIdleMs,
    requestTimeoutMs: options.requestTimeoutMs,
    maxProcessStreamMemoryMb: options.maxProcessStreamMemoryMb,
    maxFlowControlStallMs: options.maxFlowControlStallMs,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    maxConnections: options.maxConnections,
    peerSharePercent: options.peerSharePercent,
    ...(options.protocols !== undefined && { protocols: options.protocols }),
    ...(options.corsAllowedOrigins !== undefined && { corsAllowedOrigins: options.corsAllowedOrigins }),
    connectionCounters: counters,
    deadlineCounters,
    interceptors,
    logger,
  });
  return {
    grpcServer: undefined,
    addService: (definition, implementation) => server.addService(definition, implementation),
    listen: (address, tls, handed) => server.listen(address, tls, handed),
    close: (graceMs) => server.close({ graceMs }),
  };
}

/** TLS options as grpc-js's credentials: mutual TLS when a client certificate is required. */
function grpcJsCredentials(tls: ServerTlsOptions | undefined): ServerCredentials {
  const { ServerCredentials } = grpcJs();
  if (tls === undefined) return ServerCredentials.createInsecure();
  const pem = (value: string | Buffer): Buffer => (typeof value === 'string' ? Buffer.from(value) : value);
  const ca = tls.ca === undefined ? null : Buffer.concat((Array.isArray(tls.ca) ? tls.ca : [tls.ca]).map(pem));
  return ServerCredentials.createSsl(ca, [{ cert_chain: pem(tls.cert), private_key: pem(tls.key) }], tls.requireClientCertificate === true);
}

/**
 * The grpc-js the transport runs on, refused at creation when older than 1.10: before it a
 * Server has no `drain` (close would throw) and no `ServerInterceptingCall` (the adapter's
 * interceptors, and so every call, would fail), so such a server could only refuse calls.
 */
function requireTransportGrpcJs(): ReturnType<typeof grpcJs> {
  const loaded = grpcJs();
  if (typeof loaded.Server.prototype.drain === 'function' && typeof loaded.ServerInterceptingCall === 'function') return loaded;
  const version = (createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string }).version;
  throw new JwtGrpcError(
    'ERR_GRPC_JS_VERSION',
    `transport 'grpc-js' needs @grpc/grpc-js >= 1.10 (server drain and interceptors); the installed @grpc/grpc-js ${version} ` +
      "would refuse every call: install @grpc/grpc-js@'>=1.10 <2', or use transport 'http2'",
    { field: 'transport' },
  );
}

/**
 * The error for a grpc-js whose Server lacks the private members a guard wraps
 * (`createHttp2Server`, `commonServerOptions`): serving without the guard would hold what it
 * bounds without limit, so the transport is refused, naming the guard and the way out.
 */
function unguardable(what: string): JwtGrpcError {
  const version = (createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string }).version;
  return new JwtGrpcError(
    'ERR_GRPC_JS_VERSION',
    `transport 'grpc-js': @grpc/grpc-js ${version} offers no way to apply ${what} (its Server lacks createHttp2Server or commonServerOptions); ` +
      "use transport 'http2', or a @grpc/grpc-js this jwt-grpc supports (1.10 to 1.14 are tested)",
    { field: 'transport' },
  );
}

type ConnectionInjector = ReturnType<Server['createConnectionInjector']>;

/**
 * grpc-js's server for connections accepted elsewhere (a cluster's primary): its node:http2
 * server comes from createHttp2Server, so the guards above are on it. Added in grpc-js 1.11;
 * on an older one a cluster on this transport is refused, naming the version.
 */
function injectorOf(server: Server, tls: ServerTlsOptions | undefined): ConnectionInjector {
  if (typeof server.createConnectionInjector !== 'function') {
    const version = (createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string }).version;
    throw new JwtGrpcError(
      'ERR_GRPC_JS_VERSION',
      `transport 'grpc-js' in a cluster needs @grpc/grpc-js >= 1.11 (its workers take connections the primary accepts: ` +
        `Server.createConnectionInjector); the installed @grpc/grpc-js is ${version}`,
      { field: 'transport' },
    );
  }
  return server.createConnectionInjector(grpcJsCredentials(tls));
}

function grpcJsTransport({ options, interceptors, logger, counters, deadlineCounters }: TransportContext): TransportServer {
  const server = new (requireTransportGrpcJs().Server)(serverChannelOptions(options));
  if (!applyHttp2ServerOptions(server)) {
    logger.warn(
      'cannot raise the HTTP/2 stream reset limits on this @grpc/grpc-js: clients with many expiring deadlines may lose connections',
    );
  }
  // Guards, not tuning: a grpc-js they cannot reach gets no server at all (fails closed).
  if (!guardGrpcJsMemory(server, grpcJsMemoryLimits(options))) throw unguardable('the memory ceilings and the flow-control stall bound');
  const report = new PeerDeadlineReport(logger, deadlineCounters, options);
  if (!guardGrpcJsDeadlines(server, report)) throw unguardable('the request deadline and the idle bound');
  const guard = new ConnectionGuard({
    port: 'grpc',
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    maxConnections: options.maxConnections ?? defaultMaxConnections(openFilesLimit()),
    peerSharePercent: options.peerSharePercent,
    logger,
    counters,
  });
  if (!guardGrpcJsServer(server, guard)) throw unguardable('the handshake deadline and the connection cap');
  /** The address as bound ("host:0" with the port picked), the name grpc-js drains it by. */
  let boundAddress: string | undefined;
  /** A cluster worker's: what takes the connections the primary hands over, and those still open. */
  let injector: ConnectionInjector | undefined;
  const injected = new OpenSet<Socket>();
  return {
    grpcServer: server,
    addService: (definition, implementation) => addServiceToGrpcJs(server, definition, implementation, { interceptors, logger }),
    async listen(address, tls, handed) {
      if (handed !== undefined) {
        injector = injectorOf(server, tls);
        const taking = injector;
        handed.receive((socket) => {
          injected.add(socket);
          socket.once('close', () => injected.delete(socket));
          taking.injectConnection(socket);
        });
        return handed.port;
      }
      const port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(address, grpcJsCredentials(tls), (err, bound) => {
          if (err === null) resolve(bound);
          else reject(cannotListen(address, err));
        });
      });
      boundAddress = address.replace(/:0$/, `:${port}`);
      return port;
    },
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        // grpc-js's forceShutdown only destroys the connections channelz tracks, and channelz
        // is off (channel-options.ts): drain cancels the calls still running after graceMs.
        injector?.drain(graceMs);
        if (boundAddress !== undefined) server.drain(boundAddress, graceMs);
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        // grpc-js's shutdown waits for its sessions only through node:net's close, which never
        // counted a connection handed over: those are waited for here.
        server.tryShutdown(() =>
          injected.closed().then(() => {
            clearTimeout(force);
            resolve();
          }),
        );
        guard.flush();
        report.flush();
      }),
  };
}
