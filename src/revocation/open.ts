/**
 * The revocation store a server's options name: the file (`revocations`), a Redis URL or
 * a store of the caller's own (`revocationStore`), or none (memory only). The Redis store
 * is loaded by dynamic import only when a redis:// URL is given, so neither its module nor
 * its optional dependency is loaded otherwise. @internal
 */
import { JwtGrpcError, invalidOption } from '../errors.js';
import type { Logger } from '../log.js';
import { createFileRevocationStore } from './file-store.js';
import type { RevocationStore } from './types.js';

/** The options that name a store, as createJwtServer and runCluster resolve them. */
export interface StoreOptions {
  readonly revocations?: string | undefined;
  readonly revocationStore?: string | RevocationStore | undefined;
}

/** What src/revocation/redis-store.ts exports. */
interface RedisStoreModule {
  createRedisRevocationStore(url: string, options: { logger: Logger }): Promise<RevocationStore>;
}

/**
 * The Redis store's module. Its specifier is a variable so that this build compiles and
 * runs without it: where the module is not part of the build, a redis:// URL is refused
 * with a clear error instead.
 */
const REDIS_STORE_MODULE = './redis-store.js';

async function loadRedisStore(): Promise<RedisStoreModule> {
  try {
    return (await import(REDIS_STORE_MODULE)) as RedisStoreModule;
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes('redis-store');
    if (!missing) throw err;
    throw new JwtGrpcError('ERR_INVALID_OPTION', 'option revocationStore: a Redis revocation store is not available in this build of jwt-grpc', {
      field: 'revocationStore',
      cause: err,
    });
  }
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
  const { createRedisRevocationStore } = await loadRedisStore();
  return createRedisRevocationStore(store, { logger });
}
