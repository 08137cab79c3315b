/**
 * A server's Token Status List started on its revocations: createJwtServer's and
 * addJwtService's `statusList`.
 */
import { JwtGrpcError } from '../../base/errors.js';
import type { KeySet } from '../../keys/key-set.js';
import type { Logger } from '../../base/log.js';
import type { Revocations } from '../revocations.js';
import type { Revocation } from '../../contracts/revocation-store.js';
import { STATUS_LISTS_PATH, type StatusListIssuer, createStatusListIssuer } from './issuer.js';
import { statusListAlgorithm } from './token.js';

/**
 * The status list of a server: its uri under the issuer (draft-ietf-oauth-status-list-20
 * section 6.2), failing at start when no key can sign it, and its first block of indexes,
 * reserved from the revocation store (the file, Redis, or a cluster worker's primary) so
 * that no index repeats after a restart. It then marks every revocation the server holds
 * that names an index: those loaded at start, and every one that arrives later (RevokeJwt
 * here, another worker through the primary, another replica through the store). What
 * createJwtServer and addJwtService start with `statusList`. @internal
 */
export async function startStatusList(
  issuer: string,
  keys: KeySet,
  current: () => KeySet,
  lists: { ttlSeconds: number; blockSize: number; maxTtlSeconds: number },
  revocations: Revocations,
  logger: Logger,
): Promise<StatusListIssuer> {
  statusListAlgorithm(keys);
  const reserve = revocations.reserveStatusIndexes;
  // resolveServerOptions refuses statusList without such a store; a store that loses the method since is refused here.
  if (reserve === undefined)
    throw new JwtGrpcError('ERR_INVALID_OPTION', 'option statusList: the revocation store keeps no status list index counter', {
      field: 'statusList',
    });
  const list = await createStatusListIssuer({
    uriPrefix: `${issuer.replace(/\/+$/, '')}${STATUS_LISTS_PATH}`,
    keys: current,
    ...lists,
    reserve,
    logger,
  });
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
