/**
 * A whole rotation with the CLI alone, against a running cluster of two under load: a key
 * file made with `keys generate`, then the HS256 key under load staged, activated and
 * retired with `keys rotate`, each step picked up by `--watch-keys`. No call fails
 * throughout (ghz: zero non-OK), every worker signs with the new key once it is active,
 * tokens of the old key verify until it is retired, and retiring it is refused until its
 * tokens have expired.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../bench/kit/wait.js';
import { runCli } from '../../bench/kit/cli.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { reliabilityFixture } from '../reliability/fixture.js';
import { errorsOf, okCount } from '../reliability/ghz.js';
import { keyEntries } from './helpers.js';
import { askEveryConnection, keysCli, waitForReload } from './reload-helpers.js';

/** The servers' longest token lifetime, short so that the old key can be retired within the test. */
const MAX_TTL = 6;
/** The clock tolerance verifiers add to exp (the option's default). */
const TOLERANCE = 5;

describe.skipIf(process.platform !== 'linux')('rotation with the CLI alone, NODEMAXPROCS=2, under load', () => {
  const fixture = reliabilityFixture('rotation', { ghz: true });

  it('generate, stage, activate, retire: zero failed calls', async () => {
    const pool = new ClientPool();
    const file = join(fixture.dir, 'keys.json');
    await keysCli('generate', '--alg', 'HS256', '--alg', 'ES256', '--out', file);
    const oldHs = keyEntries(file)[0]?.['kid'] as string;
    const server = await fixture.serve({
      workers: 2,
      graceMs: 5000,
      keysFile: file,
      args: ['--watch-keys', '--log-format', 'json', '--ttl', String(MAX_TTL), '--max-ttl', String(MAX_TTL)],
    });
    // ghz signs HS256 all along: the algorithm whose key changes.
    const load = fixture.load({ port: server.port, connections: 4, concurrency: 40, durationS: 30, name: 'rotation' });
    const started = Date.now();
    try {
      const before = await askEveryConnection(pool, server.port, 6, 'HS256');
      expect(before.kids).toEqual([oldHs]);

      // 1. Stage: every worker knows the new key, none signs with it.
      let from = server.stderr.length;
      await keysCli('rotate', '--keys', file, '--alg', 'HS256', '--stage');
      const newHs = keyEntries(file)[0]?.['kid'] as string;
      await waitForReload(server, from, newHs, 'verify-only');
      expect((await askEveryConnection(pool, server.port, 6, 'HS256')).kids).toEqual([oldHs]);
      const oldToken = (await pool.jwt(server.port).generateJwt({ algorithm: 'HS256', subject: 'old@example.com' })).jwt;

      // 2. Activate: every worker signs with it; the old key's token verifies on every worker.
      from = server.stderr.length;
      await keysCli('rotate', '--keys', file, '--activate', newHs);
      await waitForReload(server, from, newHs, 'signs');
      const active = await askEveryConnection(pool, server.port, 6, 'HS256');
      expect(active.kids).toEqual([newHs]);
      for (const client of active.clients) expect(await client.verifyJwt({ jwt: oldToken })).toMatchObject({ valid: true });

      // 3. Retire: refused while the old key's tokens may be valid, done once they cannot be.
      const early = await runCli(['keys', 'rotate', '--keys', file, '--retire', oldHs, '--max-ttl', String(MAX_TTL)]);
      expect(early.code, early.stdout).toBe(1);
      expect(early.stderr).toMatch(/may be valid until/);
      const deactivatedAt = Date.parse(keyEntries(file).find((entry) => entry['kid'] === oldHs)?.['deactivated_at'] as string);
      await sleep(Math.max(0, deactivatedAt + (MAX_TTL + TOLERANCE + 1) * 1000 - Date.now()));
      from = server.stderr.length;
      await keysCli('rotate', '--keys', file, '--retire', oldHs, '--max-ttl', String(MAX_TTL));
      expect(keyEntries(file).map((entry) => entry['kid'])).not.toContain(oldHs);
      await waitForReload(server, from, newHs, 'signs');
      const after = await askEveryConnection(pool, server.port, 6, 'HS256');
      expect(after.kids).toEqual([newHs]);
      for (const client of after.clients)
        expect(await client.verifyJwt({ jwt: oldToken })).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
      expect(Date.now() - started, 'every step ran while ghz was loading the server').toBeLessThan(28_000);
    } finally {
      const report = await load;
      pool.closeAll();
      console.log(`rotation under load: ${okCount(report)} OK calls, errors ${JSON.stringify(errorsOf(report))}`);
      expect(errorsOf(report), 'non-OK responses under load').toEqual({});
      expect(okCount(report)).toBeGreaterThan(0);
    }
    server.signal('SIGTERM');
    expect((await server.closed).code).toBe(0);
  }, 120_000);
});
