import cluster from 'node:cluster';
import type { Server } from '@grpc/grpc-js';
import { type DiscoveryEndpoint, serveDiscovery } from '../discovery/server.js';
import { type StatusListRoute, documentsHandler } from '../discovery/handler.js';
import type { KeySet } from '../keys/key-set.js';
import type { Logger } from '../log.js';
import { STATUS_LIST_PATH, STATUS_LIST_RESIGN_FRACTION, type StatusListIssuer, createStatusListIssuer } from '../revocation/status-list/issuer.js';
import { statusListAlgorithm } from '../revocation/status-list/token.js';
import { type Tracer, type TracerProvider, metrics as otelMetrics } from '@opentelemetry/api';
import { onKeyBackendChange } from '../keys/backend.js';
import { JwtGrpcError } from '../errors.js';
import { generateEphemeralKeys } from '../keys/ephemeral.js';
import type { MethodDescription } from '../metrics/calls.js';
import { type MetricsEndpoint, hostOf, serveMetrics } from '../metrics/http.js';
import { warnAdminSecretOnPlaintext } from './plaintext-admin.js';
import { metricsInterceptor } from '../metrics/interceptor.js';
import { ServerMetrics } from '../metrics/server-metrics.js';
import { registerTracingMetrics } from '../metrics/tracing.js';
import { optionValue } from '../options/resolve.js';
import { type JwtServiceHandle, prepareJwtService } from '../jwt-service/add.js';
import { SERVICE_NAME } from '../jwt-service/definition.js';
import { checkServiceKeys } from '../jwt-service/options.js';
import { SERVER_TLS_OPTION_NAMES, type ServerTlsOptions } from '../transport/handler-api.js';
import { optionNames, refuseUnknownOptions } from '../known-options.js';
import type { ServiceDescriptor, ServiceImplementation } from '../transport/handler-api.js';
import { HEALTH_SERVICE_NAME, type HealthService, createHealthService } from './health.js';
import { type JwtServerOptions, SERVER_OPTION_NAMES, type Transport, resolveServerOptions } from './options.js';

import { createReflectionServices } from './reflection.js';
import { createTransport } from './transports.js';
import { tracingInterceptor } from '../tracing/interceptor.js';
import { readAdminSecret } from '../revocation/admin.js';
import { openRevocationStore } from '../revocation/open.js';
import { Revocations } from '../revocation/revocations.js';
import type { Revocation } from '../revocation/types.js';
import { tracingPipelineFromEnv } from '../tracing/sdk.js';
import { TRACER_NAME } from '../tracing/names.js';

/** The one name close's options hold. */
const CLOSE_OPTION_NAMES = optionNames<NonNullable<Parameters<JwtServer['close']>[0]>>({ graceMs: true });

/**
 * A JwtService server, with health and reflection, on either transport; owns its gRPC
 * server and releases it on close.
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
   * `requireClientCertificate`). Resolves to the bound port.
   */
  listen(address: string, tls?: ServerTlsOptions): Promise<number>;
  /**
   * Stops accepting calls, lets calls in flight finish, and forces the rest closed after
   * `graceMs` (0 to 600000; default 10000). Idempotent.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * The status list of a server: its uri under the issuer (draft-ietf-oauth-status-list-20
 * section 6.2), failing at start when no key can sign it, and its first block of indexes,
 * reserved from the revocation store (the file, Redis, or a cluster worker's primary) so
 * that no index repeats after a restart. It then marks every revocation the server holds
 * that names an index: those loaded at start, and every one that arrives later (RevokeJwt
 * here, another worker through the primary, another replica through the store).
 */
async function startStatusList(
  issuer: string,
  keys: KeySet,
  current: () => KeySet,
  ttlSeconds: number,
  revocations: Revocations,
  logger: Logger,
): Promise<StatusListIssuer> {
  statusListAlgorithm(keys);
  const reserve = revocations.reserveStatusIndexes;
  // resolveServerOptions refuses statusList without such a store; a store that loses the method since is refused here.
  if (reserve === undefined) throw new JwtGrpcError('ERR_INVALID_OPTION', 'option statusList: the revocation store keeps no status list index counter', { field: 'statusList' });
  const list = await createStatusListIssuer({ uri: `${issuer.replace(/\/+$/, '')}${STATUS_LIST_PATH}`, keys: current, ttlSeconds, reserve, logger });
  const mark = (arrived: readonly Revocation[]): void => markRevoked(list, arrived, logger);
  mark(revocations.values());
  revocations.subscribe(mark);
  return list;
}

/** Marks the status list entries `revocations` name; an index outside the list (a store written by another list) is logged, not marked. */
function markRevoked(list: StatusListIssuer, revocations: readonly Revocation[], logger: Logger): void {
  for (const { jti, statusIndex } of revocations) {
    if (statusIndex === undefined) continue;
    try {
      list.revoke(statusIndex);
    } catch {
      logger.warn('status list: a revocation names an index outside the list; not marked', { jti, statusIndex });
    }
  }
}

/**
 * The HTTP route of a status list: its uri's path. `Cache-Control: max-age` is a quarter
 * of the ttl, the age at which the issuer signs the list again, so a shared cache never
 * hands a verifier a list older than half its ttl (docs/status-list.md).
 */
function statusListRoute(list: StatusListIssuer): StatusListRoute {
  return { path: new URL(list.uri).pathname, token: () => list.token(), maxAgeSeconds: Math.floor(list.ttlSeconds / STATUS_LIST_RESIGN_FRACTION) };
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
  refuseUnknownOptions(options, SERVER_OPTION_NAMES, { owner: 'createJwtServer' });
  const givenKeys = options?.keys === undefined ? undefined : checkServiceKeys(options.keys);
  const { service: serviceOptions, transport: transportOptions, server: extras } = resolveServerOptions(options);
  // Keys given now must be able to sign the status list: refused here rather than at listen.
  if (extras.statusList && givenKeys !== undefined) statusListAlgorithm(givenKeys);
  // Metrics off: no registry, no interceptor, nothing counted per call.
  const metrics = extras.metricsPort !== undefined || extras.metricsRegistry !== undefined ? new ServerMetrics(extras.metricsRegistry) : undefined;
  /** Every method served, by path: the call kind the metrics label calls with. */
  const methods = new Map<string, MethodDescription>();
  // Tracing off: no provider, no interceptor, no span per call. `true` builds our own
  // pipeline from the OTEL_* variables, which this server then owns (flushed at close).
  const ownPipeline = extras.tracing === true ? tracingPipelineFromEnv() : undefined;
  const provider: TracerProvider | undefined = typeof extras.tracing === 'boolean' ? ownPipeline?.provider : extras.tracing;
  // The spans our own pipeline lost are counted beside the calls (a user's provider counts its own).
  if (metrics !== undefined && ownPipeline !== undefined) registerTracingMetrics(metrics.registry, ownPipeline.queue);
  const tracer: Tracer | undefined = provider?.getTracer(TRACER_NAME);
  const interceptors = [
    // Tracing, then metrics, then the user's: calls a later interceptor refuses are traced
    // and counted too. Durations also go to the global MeterProvider (a no-op without an SDK's).
    ...(tracer === undefined ? [] : [tracingInterceptor(tracer, otelMetrics.getMeter(TRACER_NAME))]),
    ...(metrics === undefined ? [] : [metricsInterceptor(metrics.calls, (path) => methods.get(path) ?? { path, requestStream: false, responseStream: false })]),
    ...(extras.interceptors ?? []),
  ];
  const transport = createTransport({ options: transportOptions, interceptors, logger: serviceOptions.logger, counters: metrics?.connections });
  /** The metrics and discovery ports' share of the transport's connection guards. */
  const httpPorts = { handshakeTimeoutMs: transportOptions.handshakeTimeoutMs, counters: metrics?.connections };
  const addService = (definition: ServiceDescriptor, implementation: ServiceImplementation): void => {
    for (const method of Object.values(definition)) methods.set(method.path, method);
    transport.addService(definition, implementation);
  };
  // NOT_SERVING until keys are loaded and the port is bound.
  const health: HealthService | undefined = extras.health ? createHealthService({ '': 'NOT_SERVING', [SERVICE_NAME]: 'NOT_SERVING' }) : undefined;
  const setServing = (status: 'SERVING' | 'NOT_SERVING'): void => {
    health?.setStatus('', status);
    health?.setStatus(SERVICE_NAME, status);
  };
  if (health !== undefined) addService(health.definition, health.implementation);
  if (extras.reflection) {
    for (const reflection of createReflectionServices({ services: [SERVICE_NAME, ...(health === undefined ? [] : [HEALTH_SERVICE_NAME])] })) {
      addService(reflection.definition, reflection.implementation);
    }
  }

  let state: 'created' | 'listening' | 'listened' | 'closed' = 'created';
  let service: JwtServiceHandle | undefined;
  let closing: Promise<void> | undefined;
  let metricsEndpoint: MetricsEndpoint | undefined;
  let discoveryEndpoint: DiscoveryEndpoint | undefined;
  let revocations: Revocations | undefined;
  let stopWatchingBackends: (() => void) | undefined;

  async function listen(address: string, tls?: ServerTlsOptions): Promise<number> {
    refuseUnknownOptions(tls, SERVER_TLS_OPTION_NAMES, { path: 'tls', owner: 'listen' });
    if (state !== 'created') throw new JwtGrpcError('ERR_SERVER_STATE', `listen: server is already ${state}`);
    state = 'listening';
    const keys = givenKeys ?? (await generateEphemeralKeys(serviceOptions.logger));
    let jwtHandle: JwtServiceHandle | undefined;
    let jwt: ReturnType<typeof prepareJwtService>;
    let statusList: StatusListIssuer | undefined;
    try {
      const admin = extras.adminTokenFile === undefined ? undefined : await readAdminSecret(extras.adminTokenFile, 'adminTokenFile', serviceOptions.logger);
      // The store's first load completes before the port opens: no call sees a revoked token as valid.
      revocations = new Revocations(await openRevocationStore(extras, serviceOptions.logger));
      await revocations.start(serviceOptions.logger);
      statusList = extras.statusList
        ? await startStatusList(serviceOptions.issuer as string, keys, () => jwtHandle?.keys ?? keys, extras.statusListTtlSeconds, revocations, serviceOptions.logger)
        : undefined;
      jwt = prepareJwtService(serviceOptions, keys, metrics, tracer, { revocations, admin }, statusList);
      jwtHandle = jwt.handle;
    } catch (err) {
      state = 'closed';
      await revocations?.close();
      throw err;
    }
    service = jwt.handle;
    addService(jwt.service.definition, jwt.service.implementation);
    try {
      // Every service is in now: an interceptor's rule that names none of them is refused before the port opens.
      const served: ReadonlySet<string> = new Set(methods.keys());
      for (const interceptor of interceptors) interceptor.onServe?.(served);
    } catch (err) {
      state = 'closed';
      await revocations?.close();
      throw err;
    }
    const port = await transport.listen(address, tls).catch(async (err: unknown) => {
      state = 'closed';
      await revocations?.close();
      throw err;
    });
    if ((state as string) === 'closed') throw new JwtGrpcError('ERR_SERVER_STATE', 'listen: server was closed while binding');
    if (metrics !== undefined && extras.metricsPort !== undefined) {
      metricsEndpoint = await serveMetrics(hostOf(address), extras.metricsPort, () => metrics.text(), serviceOptions.logger, httpPorts).catch(
        async (err: unknown) => {
          state = 'closed';
          await transport.close(0);
          throw err;
        },
      );
    }
    if (extras.httpPort !== undefined) {
      const handle = jwt.handle;
      discoveryEndpoint = await serveDiscovery({
        host: extras.httpHost ?? hostOf(address),
        port: extras.httpPort,
        documents: documentsHandler(
          () => handle.keys,
          { issuer: serviceOptions.issuer, maxAgeSeconds: extras.httpMaxAgeSeconds },
          statusList === undefined ? undefined : statusListRoute(statusList),
        ),
        tls: tls === undefined ? undefined : { key: tls.key, cert: tls.cert },
        ready: () => handle.keys.signingReady,
        logger: serviceOptions.logger,
        ports: httpPorts,
      }).catch(async (err: unknown) => {
        state = 'closed';
        await Promise.all([transport.close(0), metricsEndpoint?.close()]);
        throw err;
      });
    }
    state = 'listened';
    // A cluster's primary has said it for its workers (runCluster).
    if (extras.adminTokenFile !== undefined && tls === undefined && !cluster.isWorker) warnAdminSecretOnPlaintext(serviceOptions.logger, hostOf(address), port);
    setServing('SERVING');
    // A key held by an HSM or KMS whose breaker opened: JwtService is NOT_SERVING (signing) until it signs again.
    const signing = jwt.handle;
    stopWatchingBackends = onKeyBackendChange(() => {
      if (state === 'listened') health?.setStatus(SERVICE_NAME, signing.keys.signingReady ? 'SERVING' : 'NOT_SERVING');
    });
    return port;
  }

  function close(options: { graceMs?: number } = {}): Promise<void> {
    refuseUnknownOptions(options, CLOSE_OPTION_NAMES, { owner: 'close' });
    const given = options.graceMs;
    if (closing !== undefined) return closing;
    const graceMs = optionValue('graceMs', given);
    state = 'closed';
    stopWatchingBackends?.();
    setServing('NOT_SERVING');
    // Open health Watch streams end now (after the NOT_SERVING above): left open, they
    // would hold the shutdown until the grace period runs out.
    health?.close();
    const metricsClosed = metricsEndpoint?.close();
    // The documents stay served while calls drain (verifiers still need the keys); the probes say 503.
    discoveryEndpoint?.drain();
    closing = transport
      .close(graceMs)
      .then(() => Promise.all([metricsClosed, discoveryEndpoint?.close(), revocations?.close()]))
      .then(() => ownPipeline?.shutdown());
    return closing;
  }

  return {
    transport: transportOptions.transport,
    grpcServer: transport.grpcServer,
    get service(): JwtServiceHandle {
      if (service === undefined) throw new JwtGrpcError('ERR_SERVER_STATE', 'service: available once listen has resolved');
      return service;
    },
    get metricsPort() {
      return metricsEndpoint?.port;
    },
    get httpPort() {
      return discoveryEndpoint?.port;
    },
    addService(definition, implementation) {
      if (state !== 'created') throw new JwtGrpcError('ERR_SERVER_STATE', `addService: server is already ${state}; add services before listen`);
      addService(definition, implementation);
    },
    listen,
    close,
    [Symbol.asyncDispose]: () => close(),
  };
}
