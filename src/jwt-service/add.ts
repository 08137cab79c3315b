import type { Server } from '@grpc/grpc-js';
import type { Span, Tracer } from '@opentelemetry/api';
import type { KeySet } from '../keys/key-set.js';
import type { JwtPolicy } from '../policy/document.js';
import { KeyReloader } from '../keys/reload.js';
import { PolicyReloader } from '../policy/reload.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import type { ServedService } from '../contracts/handler-api.js';
import { addServiceToGrpcJs } from '../transport/grpc-js.js';
import { namesIn } from '../options/resolve.js';
import { type ExchangeOptions, JwtServiceCore, type RevocationOptions } from './core.js';
import type { StatusListIssuer } from '../revocation/status-list/issuer.js';
import { jwtService } from './handlers.js';
import { composeObservers } from './observer.js';
import { auditObserver, metricsObserver, spanObserver } from './observers.js';
import { type JwtServiceOptions, type ResolvedServiceOptions, checkServiceKeys, resolveServiceOptions } from './options.js';

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
export function addJwtService(server: Server, options: JwtServiceOptions): JwtServiceHandle {
  const resolved = resolveServiceOptions(options, { owner: 'addJwtService', also: ['keys'], elsewhere: createJwtServerOnly });
  const keys = checkServiceKeys(options.keys);
  const { handle, service } = prepareJwtService(resolved, keys);
  addServiceToGrpcJs(server, service.definition, service.implementation, { logger: resolved.logger });
  return handle;
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
  };
  return { handle, service: jwtService(core, tracer), core };
}
