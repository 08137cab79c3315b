/**
 * The revocation store a server's options name: the file (`revocations`), a Redis URL or
 * a store of the caller's own (`revocationStore`), or none (memory only). The Redis store
 * is loaded by dynamic import only when a redis:// URL is given, so neither its module nor
 * its optional dependency is loaded otherwise. @internal
 */
import { invalidOption } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { createFileRevocationStore } from './file-store.js';
import type { RevocationStore } from '../contracts/revocation-store.js';

/** The options that name a store, as createJwtServer and runCluster resolve them. */
export interface StoreOptions {
  readonly revocations?: string | undefined;
  readonly revocationStore?: string | RevocationStore | undefined;
}

/** Refuses options naming two stores; `label` names them as the caller knows them. */
export function checkStoreOptions(options: StoreOptions, label: (name: 'revocations' | 'revocationStore') => string): void {
  if (options.revocations !== undefined && options.revocationStore !== undefined) {
    throw invalidOption(`${label('revocations')}/${label('revocationStore')}`, 'give one store, not both');
  }
}

/** Makes (does not start) the store the options name; undefined for none. */
export async function openRevocationStore(options: StoreOptions, logger: Logger): Promise<RevocationStore | undefined> {
  if (options.revocations !== undefined) return createFileRevocationStore(options.revocations, { logger });
  const store = options.revocationStore;
  if (store === undefined || typeof store !== 'string') return store;
  const { createRedisRevocationStore } = await import('./redis-store.js');
  return createRedisRevocationStore(store, { logger });
}
