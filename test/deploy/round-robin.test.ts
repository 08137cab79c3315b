/**
 * Client-side balancing with no proxy: `createJwtClient` with `loadBalancing:
 * 'round_robin'` over three `jwt-grpc serve` replicas' addresses (what a headless
 * Kubernetes Service's DNS answer gives it) opens one connection per replica and spreads
 * its calls over all of them, counted by each replica's /metrics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { createJwtClient } from '../../src/lib/index.js';
import { bannerMetricsPort, scrape, valueOf } from '../ops/helpers.js';
import { keysCli } from '../ops/reload-helpers.js';

const REPLICAS = 3;
const CALLS = 600;
/** Calls in flight at once. */
const CONCURRENCY = 20;
/** round_robin takes the ready connections in turn: an even split is 33 %. */
const MIN_SHARE = 0.15;

describe('createJwtClient with loadBalancing round_robin over three replicas', () => {
  let dir: string;
  let replicas: CliServer[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-deploy-rr-'));
    const keysFile = join(dir, 'keys.json');
    await keysCli('generate', '--alg', 'ES256', '--out', keysFile);
    replicas = await Promise.all(
      Array.from({ length: REPLICAS }, () =>
        startCli(serveArgs('--keys', keysFile, '--metrics-port', '0'), { env: { NODEMAXPROCS: '1' } }),
      ),
    );
  }, 60_000);

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`spreads ${CALLS} calls of one client over every replica, and its tokens verify on each`, async () => {
    const served = (): Promise<number[]> =>
      Promise.all(
        replicas.map(async (r) =>
          valueOf(await scrape(bannerMetricsPort(r.stdout)), 'grpc_server_handled_total', { grpc_method: 'GenerateJwt', grpc_code: 'OK' }),
        ),
      );
    // grpc-js's ipv4: scheme takes a comma-separated address list: one subchannel per address.
    using client = createJwtClient(`ipv4:${replicas.map((r) => `127.0.0.1:${r.port}`).join(',')}`, { loadBalancing: 'round_robin' });
    const before = await served();
    let next = 0;
    const tokens: string[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          next += 1;
          tokens.push((await client.generateJwt({ algorithm: 'ES256', subject: 'rr@example.com' })).jwt);
        }
      }),
    );
    const counts = (await served()).map((count, i) => count - (before[i] as number));
    console.log(`round_robin over ${REPLICAS} replicas: ${counts.join(' / ')} of ${CALLS} calls`);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(CALLS);
    for (const count of counts) expect(count / CALLS).toBeGreaterThanOrEqual(MIN_SHARE);
    for (const replica of replicas) {
      using one = createJwtClient(`127.0.0.1:${replica.port}`);
      expect(await one.verifyJwt({ jwt: tokens[0] as string })).toMatchObject({ valid: true });
    }
  });
});
