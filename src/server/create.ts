import cluster from 'node:cluster';
import type { Server } from '@grpc/grpc-js';
import { type DiscoveryEndpoint, serveDiscovery } from '../discovery/server.js';
import { documentsHandler, statusListRoute } from '../discovery/handler.js';
import type { KeySet } from '../keys/key-set.js';
import type { Logger } from '../base/log.js';
import type { HttpPortLimits } from '../base/http-listen.js';
import type { HandedPort, HandedPorts } from '../base/handed-port.js';
import type { StatusListIssuer } from '../revocation/status-list/issuer.js';
import { startStatusList } from '../revocation/status-list/start.js';
import { statusListAlgorithm } from '../revocation/status-list/token.js';
import { type Tracer, type TracerProvider, metrics as otelMetrics } from '@opentelemetry/api';
import { onKeyBackendChange } from '../keys/backend.js';
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import type { Algorithm } from '../algorithms/names.js';
import { loadTrust } from '../exchange/trust.js';
import { tokenEndpoint } from '../exchange/token-endpoint.js';
import type { ExchangeOptions } from '../jwt-service/core.js';
import { generateEphemeralKeys } from '../keys/ephemeral.js';
import type { MethodDescription } from '../metrics/calls.js';
import { type MetricsEndpoint, hostOf, serveMetrics } from '../metrics/http.js';
import { warnAdminSecretOnPlaintext } from './plaintext-admin.js';
import { metricsInterceptor } from '../metrics/interceptor.js';
import { ServerMetrics } from '../metrics/server-metrics.js';
import { registerTracingMetrics } from '../metrics/tracing.js';
import { type ResolvedOptions, optionValue } from '../options/resolve.js';
import { type JwtServiceHandle, prepareJwtService } from '../jwt-service/add.js';
import { SERVICE_NAME } from '../jwt-service/definition.js';
import { checkServiceKeys } from '../jwt-service/options.js';
import { SERVER_TLS_OPTION_NAMES, type ServerTlsOptions } from '../contracts/handler-api.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import type { CallInterceptor, ServiceDescriptor, ServiceImplementation } from '../contracts/handler-api.js';
import { HEALTH_SERVICE_NAME, type HealthService, createHealthService } from './health.js';
import { type JwtServerOptions, type ResolvedServerOptions, type Transport, resolveServerOptions } from './options.js';
import { OwnedResources, releaseOnce } from './owned-resources.js';

import { createReflectionServices } from './reflection.js';
import { type TransportServer, createTransport } from './transports.js';
import { tracingInterceptor } from '../tracing/interceptor.js';
import { readAdminSecret } from '../revocation/admin.js';
import { openRevocationStore } from '../revocation/open.js';
import { Revocations } from '../revocation/revocations.js';
import { tracingPipelineFromEnv } from '../tracing/sdk.js';
import { TRACER_NAME } from '../tracing/names.js';

/** The one name close's options hold. */
const CLOSE_OPTION_NAMES = optionNames<NonNullable<Parameters<JwtServer['close']>[0]>>({ graceMs: true });

/**
 * A JwtService server, with health and reflection, on either transport; owns what it
 * opens (its gRPC server, the metrics and discovery ports, the revocation store, its own
 * tracing pipeline) and releases all of it on close, or when `listen` fails.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * // hidden: declare const greeterDefinition: ServiceDescriptor;
 * const server: JwtServer = createJwtServer({ keys });
 * server.addService(greeterDefinition, { Hello: (request: { name: string }) => ({ message: `hi ${request.name}` }) });
 * const port = await server.listen('0.0.0.0:50051');
 * await server.close({ graceMs: 5000 }); // or `await using server = ...`
 * ```
 */
export interface JwtServer extends AsyncDisposable {
  /** The gRPC server it runs on: 'http2' (jwt-grpc's own) or 'grpc-js'. */
  readonly transport: Transport;
  /** The underlying grpc-js Server on transport 'grpc-js' (for grpc-js-native services); undefined on 'http2'. */
  readonly grpcServer: Server | undefined;
  /** JwtService's handle (keys, rotation); available once `listen` has resolved. */
  readonly service: JwtServiceHandle;
  /** The port of `/metrics` once `listen` has resolved, with the `metricsPort` option; else undefined. */
  readonly metricsPort: number | undefined;
  /** The port of discovery and the JWK Set once `listen` has resolved, with the `httpPort` option; else undefined. */
  readonly httpPort: number | undefined;
  /**
   * Serves one of your own services beside JwtService, on either transport: a definition
   * (e.g. from @grpc/proto-loader) and its handlers as plain functions. Before `listen`.
   */
  addService(definition: ServiceDescriptor, implementation: ServiceImplementation): void;
  /**
   * Loads keys (or generates ephemeral ones), binds `address` (`host:port`; port 0 picks a
   * free one) and starts serving, over TLS when `tls` is given (mutual TLS with
   * `requireClientCertificate`). Resolves to the bound port. When it fails, everything the
   * server had opened is released before it rejects, and the server is closed.
   */
  listen(address: string, tls?: ServerTlsOptions): Promise<number>;
  /**
   * Stops accepting calls, lets calls in flight finish, and forces the rest closed after
   * `graceMs` (0 to 600000; default 10000), then releases everything the server opened.
   * Called while `listen` is under way, `listen` rejects (`ERR_SERVER_STATE`) and this
   * resolves once what it had opened is released. Idempotent.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Creates a gRPC server carrying `jwt.services.JwtService`, health and reflection, with
 * options validated now (an invalid one throws `JwtGrpcError` naming it).
 *
 * @example
 * ```ts
 * import { createJwtServer } from 'jwt-grpc';
 * import { loadKeys } from 'jwt-grpc/keys';
 *
 * await using server = createJwtServer({ keys: await loadKeys('keys.json'), subjects: ['ada@example.com'] });
 * const port = await server.listen('127.0.0.1:0');
 * ```
 */
export function createJwtServer(options: JwtServerOptions = {}): JwtServer {
  return createServer(options, undefined);
}

/**
 * createJwtServer for a cluster worker: its gRPC and discovery ports are the primary's,
 * which hands each connection over (src/cluster/dispatcher.ts), so `listen` binds nothing. @internal
 */
export function createWorkerJwtServer(options: JwtServerOptions, handed: HandedPorts): JwtServer {
  return createServer(options, handed);
}

function createServer(options: JwtServerOptions, handed: HandedPorts | undefined): JwtServer {
  const resolved = resolveServerOptions(options, { owner: 'createJwtServer' });
  const givenKeys = options.keys === undefined ? undefined : checkServiceKeys(options.keys);
  // Keys given now must be able to sign the status list: refused here rather than at listen.
  if (resolved.server.statusList && givenKeys !== undefined) statusListAlgorithm(givenKeys);
  return new OwningJwtServer(resolved, givenKeys, handed);
}

/** What a server's calls are observed with: its metrics, its tracer, and the interceptors that feed them, the user's after. */
interface CallObservers {
  readonly metrics: ServerMetrics | undefined;
  readonly tracer: Tracer | undefined;
  readonly interceptors: readonly CallInterceptor[];
}

/**
 * Metrics and tracing for a server's calls. Our own tracing pipeline (`tracing: true`,
 * from the OTEL_* variables) is owned by `owned`: shut down, flushing its spans, at close
 * or as soon as creating or starting the server fails.
 */
function observeCalls(
  extras: ResolvedOptions<'server'>,
  methods: ReadonlyMap<string, MethodDescription>,
  owned: OwnedResources,
): CallObservers {
  // Metrics off: no registry, no interceptor, nothing counted per call.
  const metrics =
    extras.metricsPort !== undefined || extras.metricsRegistry !== undefined ? new ServerMetrics(extras.metricsRegistry) : undefined;
  // Tracing off: no provider, no interceptor, no span per call.
  const ownPipeline = extras.tracing === true ? owned.adopt(tracingPipelineFromEnv(), (pipeline) => pipeline.shutdown()) : undefined;
  const provider: TracerProvider | undefined = typeof extras.tracing === 'boolean' ? ownPipeline?.provider : extras.tracing;
  // The spans our own pipeline lost are counted beside the calls (a user's provider counts its own).
  if (metrics !== undefined && ownPipeline !== undefined) registerTracingMetrics(metrics.registry, ownPipeline.queue);
  const tracer = provider?.getTracer(TRACER_NAME);
  const interceptors = [
    // Tracing, then metrics, then the user's: calls a later interceptor refuses are traced
    // and counted too. Durations also go to the global MeterProvider (a no-op without an SDK's).
    ...(tracer === undefined ? [] : [tracingInterceptor(tracer, otelMetrics.getMeter(TRACER_NAME))]),
    ...(metrics === undefined
      ? []
      : [metricsInterceptor(metrics.calls, (path) => methods.get(path) ?? { path, requestStream: false, responseStream: false })]),
    ...(extras.interceptors ?? []),
  ];
  return { metrics, tracer, interceptors };
}

/** JwtService as listen prepares it: its handle and service, and the status list it marks. */
interface PreparedJwtService {
  readonly jwt: ReturnType<typeof prepareJwtService>;
  readonly statusList: StatusListIssuer | undefined;
}

/**
 * createJwtServer's server. Everything it opens is owned by `#owned` as it opens, and
 * released last first: at close (the serving part first, with its grace period), and on
 * every path where creating or starting fails (at once).
 */
class OwningJwtServer implements JwtServer {
  readonly transport: Transport;
  readonly grpcServer: Server | undefined;
  /** What this server has opened, released last first. */
  readonly #owned = new OwnedResources();
  readonly #options: ResolvedServerOptions;
  readonly #givenKeys: KeySet | undefined;
  /** A cluster worker's ports, held by the primary; undefined: this server binds its own. */
  readonly #handed: HandedPorts | undefined;
  /** Every method served, by path: the call kind the metrics label calls with. */
  readonly #methods = new Map<string, MethodDescription>();
  readonly #observers: CallObservers;
  readonly #server: TransportServer;
  /** The transport's close, once: with the grace period after serving, at once on a failed start. */
  readonly #closeTransport: (graceMs: number) => Promise<void>;
  readonly #health: HealthService | undefined;
  /** The metrics and discovery ports' share of the transport's connection guards. */
  readonly #httpPorts: HttpPortLimits;
  #state: 'created' | 'listening' | 'listened' | 'closed' = 'created';
  /** The start under way or done (listen's promise): close waits for it to settle. */
  #starting: Promise<number> | undefined;
  #closing: Promise<void> | undefined;
  /** close's grace period, read by the releases it runs. */
  #graceMs = 0;
  #service: JwtServiceHandle | undefined;
  #metricsEndpoint: MetricsEndpoint | undefined;
  /** The metrics port's close, once: begun as close stops serving, awaited among the releases. */
  #closeMetrics: (() => Promise<void>) | undefined;
  #discoveryEndpoint: DiscoveryEndpoint | undefined;

  constructor(options: ResolvedServerOptions, givenKeys: KeySet | undefined, handed: HandedPorts | undefined) {
    this.#options = options;
    this.#givenKeys = givenKeys;
    this.#handed = handed;
    this.transport = options.transport.transport;
    try {
      this.#observers = observeCalls(options.server, this.#methods, this.#owned);
      const { interceptors, metrics } = this.#observers;
      this.#server = createTransport({
        options: options.transport,
        interceptors,
        logger: this.#logger,
        counters: metrics?.connections,
        deadlineCounters: metrics?.deadlines,
      });
      const server = this.#server;
      this.#closeTransport = releaseOnce((graceMs: number) => server.close(graceMs));
      this.#owned.defer(() => this.#closeTransport(this.#graceMs));
      this.grpcServer = server.grpcServer;
      this.#health = this.#addHealthAndReflection();
    } catch (err) {
      // Our own tracing pipeline may have started before the failure: it is shut down, not left behind.
      void this.#releaseAfterFailure('creating the server');
      throw err;
    }
    this.#httpPorts = {
      handshakeTimeoutMs: options.transport.handshakeTimeoutMs,
      peerSharePercent: options.transport.peerSharePercent,
      counters: this.#observers.metrics?.connections,
    };
  }

  get #logger(): Logger {
    return this.#options.service.logger;
  }

  get service(): JwtServiceHandle {
    if (this.#service === undefined) throw new JwtGrpcError('ERR_SERVER_STATE', 'service: available once listen has resolved');
    return this.#service;
  }

  get metricsPort(): number | undefined {
    return this.#metricsEndpoint?.port;
  }

  get httpPort(): number | undefined {
    return this.#discoveryEndpoint?.port;
  }

  addService(definition: ServiceDescriptor, implementation: ServiceImplementation): void {
    if (this.#state !== 'created')
      throw new JwtGrpcError('ERR_SERVER_STATE', `addService: server is already ${this.#state}; add services before listen`);
    this.#serve(definition, implementation);
  }

  async listen(address: string, tls?: ServerTlsOptions): Promise<number> {
    refuseUnknownOptions(tls, SERVER_TLS_OPTION_NAMES, { path: 'tls', owner: 'listen' });
    if (this.#state !== 'created') throw new JwtGrpcError('ERR_SERVER_STATE', `listen: server is already ${this.#state}`);
    this.#state = 'listening';
    this.#starting = this.#start(address, tls);
    return this.#starting;
  }

  close(options: { graceMs?: number } = {}): Promise<void> {
    refuseUnknownOptions(options, CLOSE_OPTION_NAMES, { owner: 'close' });
    if (this.#closing !== undefined) return this.#closing;
    this.#graceMs = optionValue('graceMs', options.graceMs);
    this.#state = 'closed';
    this.#closing = this.#release();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #serve(definition: ServiceDescriptor, implementation: ServiceImplementation): void {
    for (const method of Object.values(definition)) this.#methods.set(method.path, method);
    this.#server.addService(definition, implementation);
  }

  /** Health (NOT_SERVING until keys are loaded and the port is bound) and reflection, as the options ask. */
  #addHealthAndReflection(): HealthService | undefined {
    const extras = this.#options.server;
    const health = extras.health ? createHealthService({ '': 'NOT_SERVING', [SERVICE_NAME]: 'NOT_SERVING' }) : undefined;
    if (health !== undefined) {
      this.#serve(health.definition, health.implementation);
      // Its Watch streams end at release: left open, they would hold the transport's close until the grace period runs out.
      this.#owned.defer(() => health.close());
    }
    if (!extras.reflection) return health;
    for (const reflection of createReflectionServices({
      services: [SERVICE_NAME, ...(health === undefined ? [] : [HEALTH_SERVICE_NAME])],
    })) {
      this.#serve(reflection.definition, reflection.implementation);
    }
    return health;
  }

  #setServing(status: 'SERVING' | 'NOT_SERVING'): void {
    this.#health?.setStatus('', status);
    this.#health?.setStatus(SERVICE_NAME, status);
  }

  /** listen's steps; when one fails, everything opened so far is released before the error is thrown. */
  async #start(address: string, tls: ServerTlsOptions | undefined): Promise<number> {
    try {
      const { jwt, statusList } = await this.#prepareService();
      this.#service = jwt.handle;
      this.#serve(jwt.service.definition, jwt.service.implementation);
      this.#checkRules();
      const port = await this.#bind(address, tls);
      await this.#serveMetrics(address);
      await this.#serveDiscovery(address, tls, jwt, statusList);
      this.#goLive(address, tls, port, jwt.handle);
      return port;
    } catch (err) {
      this.#state = 'closed';
      await this.#releaseAfterFailure('listen');
      throw err;
    }
  }

  /** Throws when close was called while listen was under way: nothing more is opened, and what was is released. */
  #stillStarting(step: string): void {
    if (this.#state === 'closed') throw new JwtGrpcError('ERR_SERVER_STATE', `listen: server was closed while ${step}`);
  }

  /** Keys (given, or ephemeral ones made now), the admin secret, the revocations (owned), the status list, and JwtService on them. */
  async #prepareService(): Promise<PreparedJwtService> {
    const { service: options, server: extras } = this.#options;
    const keys = this.#givenKeys ?? (await generateEphemeralKeys(options.logger));
    const admin =
      extras.adminTokenFile === undefined ? undefined : await readAdminSecret(extras.adminTokenFile, 'adminTokenFile', options.logger);
    const revocations = await this.#openRevocations();
    let jwt: ReturnType<typeof prepareJwtService> | undefined;
    const statusList = extras.statusList
      ? await startStatusList(
          options.issuer as string,
          keys,
          () => jwt?.handle.keys ?? keys,
          {
            ttlSeconds: extras.statusListTtlSeconds,
            blockSize: extras.statusListBlockSize,
            // A token lives at most maxTtlSeconds, and verifiers accept it clockToleranceSeconds past its exp.
            maxTtlSeconds: options.maxTtlSeconds + options.clockToleranceSeconds,
          },
          revocations,
          options.logger,
        )
      : undefined;
    const trust = extras.trustFile === undefined ? undefined : await loadTrust(extras.trustFile);
    if (trust?.algorithm !== undefined && !keys.signingAlgorithms.includes(trust.algorithm as Algorithm))
      throw invalidOption(
        'trustFile',
        `trust file ${extras.trustFile}: $.algorithm: ${trust.algorithm} is not an algorithm the keys sign with`,
      );
    let exchange: ExchangeOptions | undefined;
    if (trust !== undefined) {
      // Loaded with a trust file only: the remote verifiers it is made of (src/protected-service/) are
      // the consumer's, which an issuer that exchanges no token never loads (test/package/entry-points).
      const { TrustedIssuers } = await import('../exchange/remote/issuers.js');
      exchange = {
        trust: (own) => new TrustedIssuers(trust, own, { clockToleranceSeconds: options.clockToleranceSeconds, logger: options.logger }),
        algorithm: trust.algorithm,
      };
    }
    jwt = prepareJwtService(options, keys, this.#observers.metrics, this.#observers.tracer, { revocations, admin }, statusList, exchange);
    // In the background: a trusted issuer that cannot be reached yet is logged, and fetched again at its first token.
    void jwt.core.warmExchange();
    return { jwt, statusList };
  }

  /** The revocation store the options name (or memory only), owned from the moment it exists, and its first load. */
  async #openRevocations(): Promise<Revocations> {
    const store = await openRevocationStore(this.#options.server, this.#logger);
    const revocations = this.#owned.adopt(new Revocations(store), (opened) => opened.close());
    // The store's first load completes before the port opens: no call sees a revoked token as valid.
    await revocations.start(this.#logger);
    return revocations;
  }

  /** Every service is in now: an interceptor's rule that names none of them is refused before the port opens. */
  #checkRules(): void {
    const served: ReadonlySet<string> = new Set(this.#methods.keys());
    for (const interceptor of this.#observers.interceptors) interceptor.onServe?.(served);
  }

  /** Binds the gRPC port (the transport, owned since creation, releases it). */
  async #bind(address: string, tls: ServerTlsOptions | undefined): Promise<number> {
    this.#stillStarting('starting');
    const port = await this.#server.listen(address, tls, this.#handed?.grpc);
    this.#stillStarting('binding');
    return port;
  }

  /** `/metrics` on the gRPC port's host, with the `metricsPort` option. */
  async #serveMetrics(address: string): Promise<void> {
    const metrics = this.#observers.metrics;
    const port = this.#options.server.metricsPort;
    if (metrics === undefined || port === undefined) return;
    const endpoint = await serveMetrics(hostOf(address), port, () => metrics.text(), this.#logger, this.#httpPorts);
    this.#closeMetrics = releaseOnce(() => endpoint.close());
    this.#owned.defer(this.#closeMetrics);
    this.#metricsEndpoint = endpoint;
  }

  /** Discovery, the JWK Set, the status list and (with a trust file) the token endpoint, with the `httpPort` option. */
  async #serveDiscovery(
    address: string,
    tls: ServerTlsOptions | undefined,
    { handle, core }: PreparedJwtService['jwt'],
    statusList: StatusListIssuer | undefined,
  ): Promise<void> {
    const { service: options, server: extras } = this.#options;
    if (extras.httpPort === undefined) return;
    const route = statusList === undefined ? undefined : statusListRoute(statusList);
    const exchanges = extras.trustFile !== undefined;
    const endpoint = await serveDiscovery({
      host: extras.httpHost ?? hostOf(address),
      port: extras.httpPort,
      documents: documentsHandler(
        () => handle.keys,
        { issuer: options.issuer, maxAgeSeconds: extras.httpMaxAgeSeconds },
        () => route,
        exchanges,
      ),
      token: exchanges
        ? tokenEndpoint((request) => core.exchange(request), {
            issuer: options.issuer,
            maxTokenLength: options.maxTokenLength,
            logger: this.#logger,
          })
        : undefined,
      tls: tls === undefined ? undefined : { key: tls.key, cert: tls.cert },
      ready: () => handle.keys.signingReady,
      logger: this.#logger,
      ports: this.#httpPorts,
      handed: this.#handedDiscovery(),
    });
    this.#discoveryEndpoint = this.#owned.adopt(endpoint, (opened) => opened.close());
  }

  /** A cluster worker's discovery port; one the primary did not bind is refused rather than bound here, beside the primary's. */
  #handedDiscovery(): HandedPort | undefined {
    if (this.#handed === undefined) return undefined;
    if (this.#handed.discovery === undefined)
      throw new JwtGrpcError('ERR_CLUSTER', 'httpPort: the cluster primary holds no discovery port for this worker', { field: 'httpPort' });
    return this.#handed.discovery;
  }

  /** Everything is open: SERVING, and the graceful part of close on top of what is owned. */
  #goLive(address: string, tls: ServerTlsOptions | undefined, port: number, handle: JwtServiceHandle): void {
    this.#stillStarting('starting');
    // Released first: close stops serving, with its grace period, before anything below is released.
    this.#owned.defer(() => this.#stopServing());
    this.#state = 'listened';
    // A cluster's primary has said it for its workers (runCluster).
    const plaintextAdmin = this.#options.server.adminTokenFile !== undefined && tls === undefined;
    if (plaintextAdmin && !cluster.isWorker) warnAdminSecretOnPlaintext(this.#logger, hostOf(address), port);
    this.#setServing('SERVING');
    // A key held by an HSM or KMS whose breaker opened: JwtService is NOT_SERVING (signing) until it signs again.
    this.#owned.defer(
      onKeyBackendChange(() => {
        if (this.#state === 'listened') this.#health?.setStatus(SERVICE_NAME, handle.keys.signingReady ? 'SERVING' : 'NOT_SERVING');
      }),
    );
  }

  /** The graceful part of close: NOT_SERVING, Watch streams ended, /metrics closed, discovery draining, calls given the grace period. */
  async #stopServing(): Promise<void> {
    this.#setServing('NOT_SERVING');
    // Open health Watch streams end now (after the NOT_SERVING above).
    this.#health?.close();
    // Awaited among the releases below; a failure surfaces there.
    this.#closeMetrics?.().catch(() => undefined);
    // The documents stay served while calls drain (verifiers still need the keys); the probes say 503.
    this.#discoveryEndpoint?.drain();
    await this.#closeTransport(this.#graceMs);
  }

  /** close's releases, once a listen under way has settled (it stops at its next step and releases what it opened). */
  async #release(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    await this.#owned.disposeAsync();
  }

  /** Releases everything at once after a failed start; the start's own error is what the caller gets, a failed release is logged. */
  async #releaseAfterFailure(what: string): Promise<void> {
    await this.#owned.disposeAsync().catch((err: unknown) => {
      this.#logger.error(`${what} failed, and releasing what it had opened failed too`, {
        error: err instanceof Error ? err.message : String(err),
      });
    });
  }
}
