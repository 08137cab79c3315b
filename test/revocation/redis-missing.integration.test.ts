/**
 * An app that has not installed `redis` (an optional peer dependency): the
 * Redis store fails at creation with an error that names the option and the package,
 * not a bare MODULE_NOT_FOUND. The package is hidden from this test process's resolver.
 */
import { registerHooks } from 'node:module';
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { createRedisRevocationStore } from '../../src/revocation/redis-store.js';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'redis') throw Object.assign(new Error("Cannot find module 'redis'"), { code: 'MODULE_NOT_FOUND' });
    return nextResolve(specifier, context);
  },
});

describe('the Redis store without the redis package', () => {
  it('fails naming the option and the package to install', async () => {
    const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const err = await createRedisRevocationStore('redis://127.0.0.1:6379/0', { logger }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect((err as JwtGrpcError).code).toBe('ERR_INVALID_OPTION');
    expect((err as JwtGrpcError).field).toBe('revocationStore');
    expect((err as JwtGrpcError).message).toMatch(
      /needs node-redis 5, an optional peer dependency not installed here: npm install redis@\^5$/,
    );
  });
});
