import type { Buffer } from 'node:buffer';
import { type Server as NetServer, type Socket, createServer } from 'node:net';
import type { TLSSocket, TlsOptions } from 'node:tls';
import { JwtGrpcError, invalidOption } from '../../base/errors.js';
import { ConnectionGuard, defaultMaxConnections, openFilesLimit, peerMemoryShare } from '../../base/connection-guard.js';
import type { ServerTlsOptions, ServiceDescriptor, ServiceImplementation } from '../../contracts/handler-api.js';
import { type HandedPort, serveHanded } from '../../base/handed-port.js';
import { cannotListen, parseAddress } from '../../base/address.js';
import { OpenSet } from '../../base/open-set.js';
import { optionValue } from '../../options/resolve.js';
import { nodeTls } from '../../base/optional-deps.js';
import { PEER_MEMORY, PROCESS_MEMORY } from './wire/process-memory.js';
import { STREAM_RESET_BURST, STREAM_RESET_RATE } from './defaults.js';
import { Deadlines } from './deadlines.js';
import type { CallShared } from './call.js';
import { streamHandler } from './dispatch.js';
import { type ProtocolServer, serveExchange } from '../protocols/dispatch.js';
import { type Http2GrpcServerOptions, type ResolvedHttp2Options, resolveHttp2Options } from './options.js';
import { Router } from './router.js';
import { SessionState } from './session.js';
import type { ConnectionLimits } from './wire/connection.js';
import { PeerDeadlineReport } from '../../base/peer-deadlines.js';
import { Http1Port } from '../http1/port.js';
import { type Sniffed, sniffProtocol } from '../http1/sniff.js';

/** jwt-grpc's gRPC server on its own HTTP/2. Owns its listening socket and connections, and releases them on close. */
export interface Http2GrpcServer extends AsyncDisposable {
  /** Serves every method of `definition` with the handler of the same name in `implementation`. */
  addService(definition: ServiceDescriptor, implementation: ServiceImplementation): void;
  /**
   * Binds `address` (`host:port`, `[v6]:port`; port 0 picks a free one), over TLS when
   * `tls` is given, and starts serving. Resolves to the bound port. With `handed` (a
   * cluster worker's, @internal) the primary holds the port and hands each connection over:
   * nothing is bound here.
   */
  listen(address: string, tls?: ServerTlsOptions, handed?: HandedPort): Promise<number>;
  /**
   * Stops accepting connections, sends every connection GOAWAY, lets calls in flight
   * finish, and cancels those still running after `graceMs` (the option table's graceMs: default 10000). Idempotent:
   * every call returns the same promise.
   */
  close(options?: { readonly graceMs?: number }): Promise<void>;
}

/**
 * The wire's limits of each connection. The one conversion between the layers' names: the
 * options `maxConnectionMemoryMb` and `maxProcessStreamMemoryMb` (MB, as people size
 * memory) are the connection's `maxHeldBytes` and `maxProcessHeldBytes` (bytes, what it
 * counts), the latter against the process's one count (PROCESS_MEMORY); `peerSharePercent`
 * of it is what one client address may hold (PEER_MEMORY).
 */
function connectionLimits(options: ResolvedHttp2Options): ConnectionLimits {
  return {
    maxConcurrentStreams: options.maxConcurrentStreams,
    maxHeaderListBytes: options.maxHeaderListBytes,
    maxHeldBytes: options.maxConnectionMemoryMb * 1024 * 1024,
    processMemory: PROCESS_MEMORY,
    maxProcessHeldBytes: options.maxProcessStreamMemoryMb * 1024 * 1024,
    peerMemory: PEER_MEMORY,
    maxPeerHeldBytes: peerMemoryShare(options.maxProcessStreamMemoryMb * 1024 * 1024, options.peerSharePercent),
    maxStallMs: options.maxFlowControlStallMs,
    resetBurst: STREAM_RESET_BURST,
    resetRate: STREAM_RESET_RATE,
  };
}

function secureOptions(tls: ServerTlsOptions, handshakeTimeoutMs: number): TlsOptions {
  if (typeof tls !== 'object' || tls === null) throw invalidOption('tls', 'must be an object with key and cert');
  if (tls.key === undefined || tls.cert === undefined) throw invalidOption('tls', 'key and cert are required');
  const mutual = tls.requireClientCertificate ?? false;
  if (typeof mutual !== 'boolean') throw invalidOption('tls.requireClientCertificate', 'must be a boolean');
  if (mutual && tls.ca === undefined) throw invalidOption('tls.ca', 'is required to verify client certificates (requireClientCertificate)');
  return {
    key: tls.key,
    cert: tls.cert,
    ...(tls.ca !== undefined && { ca: tls.ca as string | Buffer | (string | Buffer)[] }),
    requestCert: mutual,
    rejectUnauthorized: mutual,
    // h2 first: a client offering both gets HTTP/2 (RFC 7301: the server picks, in its order).
    ALPNProtocols: ['h2', 'http/1.1'],
    // The TLS part of the port's one deadline (node:tls's default is 120 s); the preface gets what is left.
    handshakeTimeout: handshakeTimeoutMs,
  };
}

/**
 * What Connect, gRPC-Web and CORS need of the server; undefined when it serves gRPC only
 * (and no CORS), so that every other request is refused as gRPC's protocol document says.
 */
function protocolServer(router: Router, { options, deadlines }: CallShared): ProtocolServer | undefined {
  const { protocols, corsAllowedOrigins } = options;
  if (protocols.size === 1 && protocols.has('grpc') && corsAllowedOrigins.size === 0) return undefined;
  return {
    router,
    deadlines,
    settings: options,
    maxReceiveMessageBytes: options.maxReceiveMessageBytes,
    protocolSettings: { protocols, corsAllowedOrigins },
  };
}

/**
 * Creates a gRPC server on its own HTTP/2 (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113), framed in ./wire on node:net and
 * node:tls; the gRPC over HTTP/2 protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md)): unary,
 * server-streaming, client-streaming and bidi calls, gzip/deflate messages, deadlines,
 * metadata, keepalive and connection age. Options are validated now; an invalid one
 * throws `JwtGrpcError` (`ERR_INVALID_OPTION`) naming it.
 *
 * @example
 * ```ts
 * await using server = createHttp2GrpcServer({ maxReceiveMessageBytes: 1 << 20 });
 * server.addService(definition, { SayHello: (request) => ({ message: `hello ${request.name}` }) });
 * const port = await server.listen('127.0.0.1:0');
 * ```
 */
export function createHttp2GrpcServer(options: Http2GrpcServerOptions = {}): Http2GrpcServer {
  return new OwnHttp2GrpcServer(resolveHttp2Options(options));
}

/**
 * createHttp2GrpcServer's server. Owns its listening socket (`#server`), its connections
 * (`#sessions`), the deadline timer (`#deadlines`) and the port's guard (`#guard`), and
 * releases them on close.
 */
class OwnHttp2GrpcServer implements Http2GrpcServer {
  readonly #options: ResolvedHttp2Options;
  readonly #router = new Router();
  /** The connections open now; each leaves the set as it closes. */
  readonly #sessions = new OpenSet<SessionState>();
  readonly #deadlines = new Deadlines();
  readonly #limits: ConnectionLimits;
  readonly #onStream: ReturnType<typeof streamHandler>;
  /** The connection cap and the handshake deadline of the port. */
  readonly #guard: ConnectionGuard;
  /** What the request, idle and age deadlines close, counted and logged. */
  readonly #report: PeerDeadlineReport;
  /** The same port's HTTP/1.1 (../http1/): the connections whose first bytes or ALPN say HTTP/1.1. */
  readonly #http1: Http1Port;
  /** Connections whose first bytes are not read yet: closed at once by close(). */
  readonly #sniffing = new OpenSet<Socket>();
  #state: 'created' | 'listening' | 'listened' | 'closed' = 'created';
  #server: NetServer | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedHttp2Options) {
    this.#options = options;
    this.#limits = connectionLimits(options);
    const shared = { options, deadlines: this.#deadlines };
    const protocols = protocolServer(this.#router, shared);
    this.#onStream = streamHandler(this.#router, shared, protocols);
    this.#guard = new ConnectionGuard({
      port: 'grpc',
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      maxConnections: options.maxConnections ?? defaultMaxConnections(openFilesLimit()),
      peerSharePercent: options.peerSharePercent,
      logger: options.logger,
      counters: options.connectionCounters,
    });
    this.#report = new PeerDeadlineReport(options.logger, options.deadlineCounters, options);
    this.#http1 = new Http1Port({
      options,
      guard: this.#guard,
      report: this.#report,
      router: this.#router,
      memory: this.#limits,
      serve: protocols === undefined ? undefined : (exchange) => serveExchange(exchange, protocols),
    });
  }

  addService(definition: ServiceDescriptor, implementation: ServiceImplementation): void {
    if (this.#state === 'closed') throw new JwtGrpcError('ERR_SERVER_STATE', 'addService: server is closed');
    this.#router.add(definition, implementation);
  }

  async listen(address: string, tls?: ServerTlsOptions, handed?: HandedPort): Promise<number> {
    if (this.#state !== 'created') throw new JwtGrpcError('ERR_SERVER_STATE', `listen: server is already ${this.#state}`);
    const { host, port } = parseAddress(address);
    const created = this.#netServer(address, tls);
    this.#state = 'listening';
    this.#server = created;
    // The connection cap, and the deadline's start; a connection that fails its TLS handshake is counted and affects no other.
    this.#guard.attach(created);
    if (handed !== undefined) {
      this.#state = 'listened';
      return serveHanded(created, handed);
    }
    await this.#bind(created, host, port, address);
    created.on('error', (err) => this.#options.logger.error('gRPC server error', { error: err.message }));
    if ((this.#state as string) === 'closed') {
      created.close();
      throw new JwtGrpcError('ERR_SERVER_STATE', 'listen: server was closed while binding');
    }
    this.#state = 'listened';
    const bound = created.address();
    return typeof bound === 'object' && bound !== null ? bound.port : port;
  }

  close({ graceMs: given }: { readonly graceMs?: number } = {}): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    let graceMs: number;
    try {
      graceMs = optionValue('graceMs', given);
    } catch (err) {
      return Promise.reject(err);
    }
    const wasListening = this.#state === 'listened';
    this.#state = 'closed';
    this.#closing = this.#server === undefined || !wasListening ? Promise.resolve() : this.#shutdown(this.#server, graceMs);
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * The listening socket: node:net, or node:tls offering h2 and http/1.1. TLS material node:tls
   * refuses is `ERR_LISTEN` naming the option, as on transport grpc-js.
   */
  #netServer(address: string, tls: ServerTlsOptions | undefined): NetServer {
    // allowHalfOpen: a plaintext client that half-closes TCP after its requests still gets
    // their answers (wire/connection.ts ends our side). Not over TLS, where a client ends
    // with close_notify, and a half-open TLSSocket whose handshake a client abandoned would
    // stay open (a client that refused the server's certificate kept close() waiting).
    if (tls === undefined) return createServer({ allowHalfOpen: true }, this.#onConnection);
    const secure = secureOptions(tls, this.#guard.handshakeTimeoutMs);
    try {
      return nodeTls().createServer(secure, this.#onSecureConnection);
    } catch (err) {
      throw new JwtGrpcError('ERR_LISTEN', `cannot listen on ${address}: tls: ${(err as Error).message}`, { field: 'tls', cause: err });
    }
  }

  /** Binds `server`; a bind that fails leaves this server closed. */
  async #bind(server: NetServer, host: string, port: number, address: string): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      this.#state = 'closed';
      throw cannotListen(address, err as Error);
    }
  }

  /**
   * A plaintext connection: HTTP/1.1 when its first bytes are a request line, else HTTP/2,
   * whose preface check refuses and counts what is neither (`preface`); one that sent too
   * little to tell within the handshake deadline is closed and counted `timeout`.
   */
  readonly #onConnection = (socket: Socket): void => {
    if (this.#state === 'closed') {
      this.#serveHttp2(socket);
      return;
    }
    this.#sniff(socket, (sniffed) => {
      if (sniffed === 'http/1.1') this.#http1.serve(socket);
      else if (sniffed === 'timeout') this.#handshakeTimedOut(socket);
      else if (sniffed === 'other') {
        this.#serveHttp2(socket);
        socket.resume();
      }
    });
  };

  /** Too few bytes to tell the protocol within the handshake deadline: counted and closed, on either protocol. */
  #handshakeTimedOut(socket: Socket): void {
    this.#guard.failed('timeout');
    socket.destroy();
  }

  /** Reads the first bytes of `socket` within what is left of its handshake deadline (../http1/sniff.ts). */
  #sniff(socket: Socket, decided: (sniffed: Sniffed) => void): void {
    this.#sniffing.add(socket);
    sniffProtocol(socket, this.#guard.remainingMs(socket), (sniffed) => {
      this.#sniffing.delete(socket);
      decided(sniffed);
    });
  }

  #serveHttp2(socket: Socket): void {
    const session = new SessionState(
      socket,
      this.#limits,
      this.#options,
      this.#onStream,
      (closed) => this.#sessions.delete(closed),
      this.#guard,
      this.#report,
    );
    this.#sessions.add(session);
    // A connection accepted while closing is told to go away at once.
    if (this.#state === 'closed') void session.gracefulClose('server_shutdown', Number.POSITIVE_INFINITY);
  }

  /**
   * ALPN decided h2 or http/1.1. A client that offered no ALPN is served HTTP/1.1 when its
   * first bytes are a request line, and refused (counted `tls`) otherwise, as before HTTP/1.1
   * was served: HTTP/2 over TLS needs ALPN (RFC 9113 §3.2).
   */
  readonly #onSecureConnection = (socket: TLSSocket): void => {
    if (socket.alpnProtocol === 'h2') this.#serveHttp2(socket);
    else if (socket.alpnProtocol === 'http/1.1') this.#http1.serve(socket);
    else if (this.#state === 'closed') socket.destroy();
    else
      this.#sniff(socket, (sniffed) => {
        if (sniffed === 'http/1.1') this.#http1.serve(socket);
        else if (sniffed === 'timeout') this.#handshakeTimedOut(socket);
        else if (sniffed === 'other') {
          this.#guard.failed('tls');
          socket.destroy();
        }
      });
  };

  /**
   * Stops accepting at once, so new connections are refused, not accepted and sent away;
   * resolves once every connection has closed. Each gets the two GOAWAYs of gracefulClose,
   * and is forced closed after `graceMs`.
   */
  async #shutdown(server: NetServer, graceMs: number): Promise<void> {
    const force = setTimeout(() => {
      for (const session of this.#sessions) session.forceClose('the server is shutting down');
    }, graceMs);
    const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.#sniffing) socket.destroy();
    const http1Closed = this.#http1.close(graceMs);
    await Promise.all([...this.#sessions].map((session) => session.gracefulClose('server_shutdown', Number.POSITIVE_INFINITY)));
    // The connections are counted here, not by node:net's close: one a cluster's primary handed over was never accepted by `server`.
    await Promise.all([listenerClosed, this.#sessions.closed(), http1Closed]);
    this.#guard.flush();
    this.#report.flush();
    clearTimeout(force);
    this.#deadlines.stop();
  }
}
