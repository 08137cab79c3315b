import type { Server } from '@grpc/grpc-js';
import type { KeySet } from '../keys/key-set.js';
import { JwtServiceCore } from './core.js';
import { jwtServiceDefinition } from './definition.js';
import { jwtServiceHandlers } from './handlers.js';
import { type JwtServiceOptions, type ResolvedServiceOptions, resolveServiceOptions } from './options.js';

/** What {@link addJwtService} returns: the live key set, and rotation. */
export interface JwtServiceHandle {
  /** The key set in use. */
  readonly keys: KeySet;
  /**
   * Rotates keys without a restart: new tokens are signed with the new set's active keys,
   * and the verification cache starts empty. Keep the old keys in the new set (after the
   * new ones) until the tokens they signed have expired.
   */
  setKeys(keys: KeySet): void;
}

/**
 * Adds `jwt.services.JwtService` to a grpc-js server you already have. Options are
 * validated here, once; an invalid one throws `JwtGrpcError` (`ERR_INVALID_OPTION`).
 *
 * @example
 * ```ts
 * import { Server, ServerCredentials } from '@grpc/grpc-js';
 * import { addJwtService, loadKeys } from 'jwt-grpc';
 *
 * const server = new Server();
 * addJwtService(server, { keys: await loadKeys('keys.json'), issuer: 'https://auth.example' });
 * server.bindAsync('0.0.0.0:50051', ServerCredentials.createInsecure(), () => {});
 * ```
 */
export function addJwtService(server: Server, options: JwtServiceOptions): JwtServiceHandle {
  const resolved = resolveServiceOptions(options);
  return addResolvedJwtService(server, resolved, resolved.keys as KeySet);
}

/** addJwtService for options validated earlier (createJwtServer validates at creation, keys come at listen). @internal */
export function addResolvedJwtService(server: Server, resolved: ResolvedServiceOptions, keys: KeySet): JwtServiceHandle {
  const core = new JwtServiceCore(resolved, keys);
  server.addService(jwtServiceDefinition().service, jwtServiceHandlers(core, resolved.logger));
  return {
    get keys() {
      return core.keys;
    },
    setKeys: (keys) => core.setKeys(keys),
  };
}
