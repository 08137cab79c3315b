import type { Server } from '@grpc/grpc-js';
import type { Span, Tracer } from '@opentelemetry/api';
import type { KeySet } from '../keys/key-set.js';
import type { JwtPolicy } from '../policy/document.js';
import { KeyReloader } from '../keys/reload.js';
import { PolicyReloader } from '../policy/reload.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import type { ServedService } from '../contracts/handler-api.js';
import { addServiceToGrpcJs } from '../transport/grpc-js.js';
import { type NamesIn, type ResolvedOptions, libraryLabel, namesIn, resolveGroups } from '../options/resolve.js';
import { type ExchangeOptions, JwtServiceCore, type RevocationOptions } from './core.js';
import type { StatusListIssuer } from '../revocation/status-list/issuer.js';
import { startStatusList } from '../revocation/status-list/start.js';
import { checkStoreOptions, openRevocationStore } from '../revocation/open.js';
import { Revocations } from '../revocation/revocations.js';
import type { RevocationStore } from '../contracts/revocation-store.js';
import { invalidOption, JwtGrpcError } from '../base/errors.js';
import { GrpcStatus, GrpcStatusError, type ServiceImplementation, type UnaryHandler } from '../contracts/handler-api.js';
import { jwtServiceDefinition } from './definition.js';
import { jwtService } from './handlers.js';
import { composeObservers } from './observer.js';
import { auditObserver, metricsObserver, spanObserver } from './observers.js';
import { type JwtServiceOptions, type ResolvedServiceOptions, checkServiceKeys, serviceRules } from './options.js';

/**
 * What {@link addJwtService} returns: the live key set, and rotation.
 *
 * @example
 * ```ts
 * // hidden: import { Server } from '@grpc/grpc-js';
 * // hidden: const server = new Server();
 * // hidden: declare const oldKeys: KeySet;
 * const jwt: JwtServiceHandle = addJwtService(server, { keys: oldKeys });
 * jwt.setKeys(mergeKeySets(oldKeys, await generateKeys({ algorithms: ['ES256'] }))); // new key signs, old ones verify
 * await jwt.reloadKeys(() => loadKeys('keys.json'));                                 // or from the key file, checked
 * jwt.setPolicy(await loadPolicy('policy.json'));                                    // who may get which token, checked
 * await jwt.reloadPolicy(() => loadPolicy('policy.json'));                            // or reloaded: a broken file changes nothing
 * ```
 */
export interface JwtServiceHandle {
  /** The key set in use. */
  readonly keys: KeySet;
  /**
   * Rotates keys without a restart: new tokens are signed with the new set's active keys,
   * and the verification cache starts empty. Calls in flight finish with the keys they
   * started with. Keep the old keys in the new set until the tokens they signed have expired:
   * {@link mergeKeySets} makes that set.
   */
  setKeys(keys: KeySet): void;
  /**
   * Loads keys with `load` (e.g. `() => loadKeys(file)`) and puts them in use when they can
   * take over: every algorithm signed now must still be signed. Otherwise, or when `load`
   * fails, the keys in use stay, an error is logged and counted (metrics), and the promise
   * rejects with the reason. Reloads run one at a time.
   */
  reloadKeys(load: () => Promise<KeySet>): Promise<KeySet>;
  /** The issuance policy in use; undefined in open mode (any caller may get any token). */
  readonly policy: JwtPolicy | undefined;
  /**
   * Puts `policy` in use for the GenerateJwt calls that start after; checked first: a
   * broken one throws `ERR_INVALID_OPTION` naming the JSON path, and the policy in use
   * stays. E.g. `jwt.setPolicy(await loadPolicy('policy.json'))` on a reload signal.
   */
  setPolicy(policy: JwtPolicy): void;
  /**
   * Loads a policy with `load` (e.g. `() => loadPolicy(file)`) and puts it in use. When
   * `load` fails (a file that cannot be read, is not JSON or breaks the schema), the policy
   * in use stays, one error line names the file, the JSON path and the problem, the failure
   * is counted (metrics), and the promise rejects with it. Reloads run one at a time.
   */
  reloadPolicy(load: () => Promise<JwtPolicy>): Promise<JwtPolicy>;
  /**
   * The Token Status List of a server made with `statusList` (docs/status-list.md);
   * undefined otherwise. `statusList.revoke(idx)` marks the token whose `status` claim
   * carries `idx` revoked: remote verifiers refuse it within the list's ttl.
   */
  readonly statusList?: StatusListIssuer;
  /**
   * Settles once the service can answer. At once, unless addJwtService was given a
   * revocation store: then once the store's revocations have loaded and the status list
   * has its first block of indexes; await it before the server takes calls (calls that
   * come earlier answer UNAVAILABLE, never a revoked token as valid). Rejects, and every
   * call answers UNAVAILABLE, when the store cannot be opened.
   */
  readonly ready: Promise<void>;
  /** Releases what addJwtService opened for the service (its revocation store); createJwtServer's close releases its own. */
  close(): Promise<void>;
}

/**
 * Options of {@link addJwtService}: the service's, and where its revocations are kept,
 * as createJwtServer takes them (docs/revocation.md, docs/status-list.md).
 *
 * @example
 * ```ts
 * const options: AddJwtServiceOptions = {
 *   keys: await loadKeys('keys.json'),
 *   issuer: 'https://auth.example',
 *   revocations: '/var/lib/jwt-grpc/revocations.jsonl',
 *   statusList: true,
 * };
 * ```
 */
export interface AddJwtServiceOptions extends JwtServiceOptions {
  /** An append-only file that keeps revocations (RevokeJwt) across restarts, as createJwtServer's. Default: in memory only. */
  readonly revocations?: string;
  /** A `redis://` or `rediss://` URL, or a `RevocationStore` of your own, instead of `revocations`, as createJwtServer's. Default: none. */
  readonly revocationStore?: string | RevocationStore;
  /**
   * Puts a Token Status List entry (`status` claim) in every token, as createJwtServer's;
   * serve the lists with `jwksHandler(handle)` at ISSUER/statuslists/N, where remote
   * verifiers read revocations. Needs `issuer`, and `revocations` or `revocationStore`
   * (the index counter must outlive a restart). Default false.
   */
  readonly statusList?: boolean;
  /** The lists' ttl: how late a remote verifier may learn of a revocation, 1 to 86400 s. Default 60. */
  readonly statusListTtlSeconds?: number;
  /** Status list indexes reserved from the store at a time, 8 to 65536. Default 4096. */
  readonly statusListBlockSize?: number;
}

/**
 * Adds `jwt.services.JwtService` to a grpc-js server you already have. Options are
 * validated here, once; an invalid one throws `JwtGrpcError` (`ERR_INVALID_OPTION`).
 *
 * @example
 * ```ts
 * import { Server, ServerCredentials } from '@grpc/grpc-js';
 * import { addJwtService } from 'jwt-grpc';
 * import { loadKeys } from 'jwt-grpc/keys';
 *
 * const server = new Server();
 * addJwtService(server, { keys: await loadKeys('keys.json'), issuer: 'https://auth.example' });
 * server.bindAsync('0.0.0.0:50051', ServerCredentials.createInsecure(), () => {});
 * ```
 */
export function addJwtService(server: Server, options: AddJwtServiceOptions): JwtServiceHandle {
  const { resolved, stores } = resolveAddOptions(options);
  const keys = checkServiceKeys(options.keys);
  if (stores === undefined) {
    const { handle, service } = prepareJwtService(resolved, keys);
    addServiceToGrpcJs(server, service.definition, service.implementation, { logger: resolved.logger });
    return handle;
  }
  return addWithRevocations(server, resolved, keys, stores);
}

/** The revocation options addJwtService shares with createJwtServer: rows of the table's server group. */
const STORE_OPTION_NAMES = [
  'revocations',
  'revocationStore',
  'statusList',
  'statusListTtlSeconds',
  'statusListBlockSize',
] as const satisfies readonly NamesIn<'server'>[];

/** The store options once resolved, as createJwtServer's are. */
type StoreOptions = Pick<ResolvedOptions<'server'>, (typeof STORE_OPTION_NAMES)[number]>;

/**
 * addJwtService's options in one pass through the table: the service's and the store
 * options of the server group (any other name refused, each checked, defaults filled in),
 * then the rules across them, which read only the result. `stores` is undefined when no
 * option names a store: the service starts at once.
 */
function resolveAddOptions(options: AddJwtServiceOptions): { resolved: ResolvedServiceOptions; stores: StoreOptions | undefined } {
  const groups = resolveGroups(['service', 'server'], options, {
    owner: 'addJwtService',
    also: ['keys'],
    only: { server: STORE_OPTION_NAMES },
    elsewhere: createJwtServerOnly,
  });
  const resolved = serviceRules(groups.service, options);
  const stores: StoreOptions = groups.server;
  checkStoreOptions(stores, libraryLabel);
  const durable = stores.revocations !== undefined || stores.revocationStore !== undefined;
  if (stores.statusList && resolved.issuer === undefined)
    throw invalidOption('statusList', 'needs issuer: the lists are published at ISSUER/statuslists/N');
  if (stores.statusList && !durable)
    throw invalidOption(
      'statusList',
      "needs revocations or revocationStore: a store that keeps the status list's index counter, so that no index is handed out twice after a restart",
    );
  return { resolved, stores: durable ? stores : undefined };
}

/**
 * JwtService on `server` at once, answering once its revocations have loaded: grpc-js
 * takes services before it binds, while a store opens asynchronously. Until then every
 * call answers UNAVAILABLE, so none sees a revoked token as valid.
 */
function addWithRevocations(server: Server, resolved: ResolvedServiceOptions, keys: KeySet, stores: StoreOptions): JwtServiceHandle {
  const logger = resolved.logger;
  let started: { jwt: ReturnType<typeof prepareJwtService>; revocations: Revocations } | undefined;
  let closed = false;
  const ready = (async () => {
    const revocations = new Revocations(await openRevocationStore(stores, logger));
    try {
      await revocations.start(logger);
      let jwt: ReturnType<typeof prepareJwtService> | undefined;
      const statusList = stores.statusList
        ? await startStatusList(
            resolved.issuer as string,
            keys,
            () => jwt?.handle.keys ?? keys,
            {
              ttlSeconds: stores.statusListTtlSeconds,
              blockSize: stores.statusListBlockSize,
              maxTtlSeconds: resolved.maxTtlSeconds + resolved.clockToleranceSeconds,
            },
            revocations,
            logger,
          )
        : undefined;
      jwt = prepareJwtService(resolved, keys, undefined, undefined, { revocations }, statusList);
      if (closed) throw new JwtGrpcError('ERR_SERVER_STATE', 'addJwtService: closed while its revocations were loading');
      started = { jwt, revocations };
    } catch (err) {
      await revocations.close();
      throw err;
    }
  })();
  // The rejection is the handle's `ready` to report; calls meanwhile answer UNAVAILABLE.
  ready.catch((err: unknown) => logger.error('JwtService cannot start: its revocation store failed', { error: (err as Error).message }));
  addServiceToGrpcJs(
    server,
    jwtServiceDefinition(),
    whenStarted(() => started?.jwt.service.implementation),
    { logger },
  );
  const current = (): JwtServiceHandle => {
    if (started === undefined) throw new JwtGrpcError('ERR_SERVER_STATE', 'addJwtService: await handle.ready first');
    return started.jwt.handle;
  };
  return {
    get keys() {
      return started?.jwt.handle.keys ?? keys;
    },
    setKeys: (next) => current().setKeys(next),
    reloadKeys: async (load) => (await ready, current().reloadKeys(load)),
    get policy() {
      return started?.jwt.handle.policy;
    },
    setPolicy: (next) => current().setPolicy(next),
    reloadPolicy: async (load) => (await ready, current().reloadPolicy(load)),
    get statusList() {
      return started?.jwt.handle.statusList;
    },
    ready,
    close: async () => {
      closed = true;
      await started?.revocations.close();
    },
  };
}

/** JwtService's methods, each answering UNAVAILABLE until `implementation()` has the started service's. */
function whenStarted(implementation: () => ServiceImplementation | undefined): ServiceImplementation {
  const forward =
    (method: string): UnaryHandler<unknown, unknown> =>
    (request, call) => {
      const handler = implementation()?.[method] as UnaryHandler<unknown, unknown> | undefined;
      if (handler === undefined) throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'JwtService is loading its revocations');
      return handler(request, call);
    };
  return Object.fromEntries(Object.keys(jwtServiceDefinition()).map((method) => [method, forward(method)]));
}

/** A createJwtServer option (`health`, `metricsPort`, a transport setting) given to addJwtService: where it goes instead. */
function createJwtServerOnly(name: string): string | undefined {
  // The names createJwtServer adds to these (its server and transport groups), from the table below this layer.
  return (namesIn('server') as string[]).includes(name) || (namesIn('transport') as string[]).includes(name)
    ? 'it is an option of createJwtServer: set it on your own grpc-js server instead'
    : undefined;
}

/**
 * JwtService for options validated earlier and keys already checked, ready for either
 * transport (createJwtServer validates at creation; its keys may come at listen),
 * counting into `metrics` and tracing with `tracer` when given. @internal
 */
export function prepareJwtService(
  resolved: ResolvedServiceOptions,
  keys: KeySet,
  metrics?: ServerMetrics,
  tracer?: Tracer,
  revocation?: RevocationOptions,
  statusList?: StatusListIssuer,
  exchange?: ExchangeOptions,
): { handle: JwtServiceHandle; service: ServedService; core: JwtServiceCore<Span> } {
  // Audit lines, metrics and spans are observers around the core, composed here once.
  const observer = composeObservers<Span>([
    auditObserver(resolved.logger, resolved.maxSubjectLength),
    metrics === undefined ? undefined : metricsObserver(metrics.service),
    tracer === undefined ? undefined : spanObserver,
  ]);
  const core = new JwtServiceCore<Span>({ options: resolved, keys, observer, revocation, statusList, exchange });
  metrics?.service.attach(core);
  const reloader = new KeyReloader({
    current: () => core.keys,
    apply: (next) => core.setKeys(next),
    logger: resolved.logger,
    metrics: metrics?.reloads,
  });
  // The service swaps the policy whole: a call that has started keeps the one it read.
  const policyReloader = new PolicyReloader({
    apply: (next) => core.setPolicy(next),
    logger: resolved.logger,
    metrics: metrics?.policyReloads,
  });
  const handle: JwtServiceHandle = {
    get keys() {
      return core.keys;
    },
    setKeys: (next) => core.setKeys(next),
    reloadKeys: (load) => reloader.reload(load),
    get policy() {
      return core.policy;
    },
    setPolicy: (next) => core.setPolicy(next),
    reloadPolicy: (load) => policyReloader.reload(load),
    statusList,
    ready: Promise.resolve(),
    close: async () => {},
  };
  return { handle, service: jwtService(core, tracer), core };
}
