/**
 * What a revocation costs in Redis: a throwaway redis-server, 100,000 revocations made
 * through the store as a server makes them (one script each: version, SET with EX,
 * PUBLISH), and Redis's own accounting before and after: `INFO memory` (used_memory) and
 * `MEMORY USAGE` of one key. Run: `npm run build && node dist/bench/revocation/redis-memory.js`
 * (`--count N`, `--reason TEXT` to store a reason with each). docs/revocation-redis.md
 * quotes its output.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createClient } from 'redis';
import { findRedisServer, startRedisServer } from '../kit/redis.js';
import { killAll } from '../kit/launcher.js';
import type { Logger } from '../../src/base/log.js';
import { createRedisRevocationStore } from '../../src/revocation/redis-store.js';

const { values } = parseArgs({ options: { count: { type: 'string', default: '100000' }, reason: { type: 'string' } } });
const count = Number(values.count);
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count: a positive integer');
/** Revocations in flight at once: enough to keep Redis busy, few enough for one connection. */
const IN_FLIGHT = 500;

const quiet: Logger = { info: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) };

async function usedMemory(client: ReturnType<typeof createClient>): Promise<number> {
  const info = await client.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)![1]);
}

const redis = await startRedisServer();
try {
  const client = createClient({ url: redis.url() });
  await client.connect();
  const store = await createRedisRevocationStore(redis.url(), { logger: quiet });
  await store.start(() => undefined);
  const before = await usedMemory(client);
  const expiresAt = Math.floor(Date.now() / 1000) + 3_600;
  let sampleJti = '';
  for (let done = 0; done < count; done += IN_FLIGHT) {
    await Promise.all(
      Array.from({ length: Math.min(IN_FLIGHT, count - done) }, (_, i) => {
        // A jti as jwt-grpc issues them: 128 random bits, base64url (22 characters).
        const jti = randomBytes(16).toString('base64url');
        sampleJti = jti;
        return store.add({ jti, expiresAt, statusIndex: done + i, ...(values.reason === undefined ? {} : { reason: values.reason }) });
      }),
    );
  }
  const after = await usedMemory(client);
  const key = `jwt-grpc:revoked:${sampleJti}`;
  const keyUsage = await client.memoryUsage(key);
  const value = await client.get(key);
  await store.close();
  client.destroy();
  console.log(execFileSync(findRedisServer()!, ['--version']).toString().trim());
  console.log(`revocations: ${count}${values.reason === undefined ? '' : `, reason ${JSON.stringify(values.reason)}`}`);
  console.log(
    `INFO memory used_memory: ${before} bytes before, ${after} after: ${((after - before) / count).toFixed(1)} bytes per revocation`,
  );
  console.log(`MEMORY USAGE ${key}: ${keyUsage} bytes (value ${value!.length} bytes: ${value})`);
} finally {
  await killAll();
}
