/**
 * Reloading the key file without a restart (SIGHUP), in one process and in a cluster of
 * two, under load (ghz through the reliability fixture): after a staged key is reloaded
 * every worker publishes it (its own log line says so, and GetJwks over several
 * connections); after it is activated every worker signs with it; tokens of the previous
 * key verify throughout; a missing or broken file (a degenerate key included) changes
 * nothing but an error line and a counter; and no call fails.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { errorsOf, okCount } from '../reliability/ghz.js';
import { reliabilityFixture } from '../reliability/fixture.js';
import { bannerMetricsPort, keyEntries, scrape, valueOf } from './helpers.js';
import { askEveryConnection, keysCli, waitForReload, waitForReloadFailure } from './reload-helpers.js';

/** A verify-only Ed25519 key whose public key is the identity point: degenerate, refused on reload. */
const IDENTITY_KEY = { kty: 'OKP', crv: 'Ed25519', x: `AQ${'A'.repeat(41)}`, kid: 'ed-identity', alg: 'EdDSA' };

/** Enough connections that node:cluster's round robin gives each of two workers several. */
const CONNECTIONS = 6;

describe.skipIf(process.platform !== 'linux')('key reload on SIGHUP, under load', () => {
  const fixture = reliabilityFixture('reload', { ghz: true });

  for (const workers of [1, 2]) {
    const mode = workers === 1 ? 'single process' : `cluster of ${workers}`;
    it(`${mode}: stage, activate and a broken file, with no failed call`, async () => {
      const pool = new ClientPool();
      const file = join(fixture.dir, `keys-${workers}.json`);
      await keysCli('generate', '--alg', 'HS256', '--alg', 'ES256', '--out', file, '--force');
      const oldEs = keyEntries(file)[1]?.['kid'] as string;
      const server = await fixture.serve({ workers, graceMs: 5000, keysFile: file, args: ['--log-format', 'json', '--metrics-port', '0'] });
      const metricsPort = bannerMetricsPort(server.stdout);
      const load = fixture.load({ port: server.port, connections: 4, concurrency: 40, durationS: 14, name: `reload-${workers}` });
      try {
        // A token of the key in use, to verify after every step.
        const oldToken = await pool.jwt(server.port).generateJwt({ algorithm: 'ES256', subject: 'before@example.com', ttl_seconds: 600 });
        expect(oldToken.kid).toBe(oldEs);

        // 1. Stage: every worker publishes the new key and still signs with the old one.
        let from = server.stderr.length;
        await keysCli('rotate', '--keys', file, '--alg', 'ES256', '--stage');
        const newEs = keyEntries(file)[0]?.['kid'] as string;
        server.signal('SIGHUP');
        await waitForReload(server, from, newEs, 'verify-only');
        const staged = await askEveryConnection(pool, server.port, CONNECTIONS, 'ES256');
        expect(staged.kids).toEqual([oldEs]);
        for (const kids of staged.published) expect(kids).toContain(newEs);

        // 2. Activate: every worker signs with it; the old key's tokens still verify everywhere.
        from = server.stderr.length;
        await keysCli('rotate', '--keys', file, '--activate', newEs);
        server.signal('SIGHUP');
        await waitForReload(server, from, newEs, 'signs');
        const active = await askEveryConnection(pool, server.port, CONNECTIONS, 'ES256');
        expect(active.kids).toEqual([newEs]);
        for (const client of active.clients) expect(await client.verifyJwt({ jwt: oldToken.jwt })).toMatchObject({ valid: true });

        // 3. A file that does not load, or that would stop signing HS256: nothing changes.
        const good = JSON.stringify({ keys: keyEntries(file) });
        const broken: [string, string | null, RegExp][] = [
          ['a missing file', null, /cannot read key file .*ENOENT/],
          ['bad JSON', good.slice(0, good.length / 2), /not valid JSON/],
          [
            'no HS256 signer',
            JSON.stringify({ keys: keyEntries(file).filter((entry) => entry['alg'] !== 'HS256') }),
            /no key could sign HS256/,
          ],
          ['a short secret', good.replace(/"k":\s*"[^"]+"/, '"k":"c2hvcnQ"'), /HMAC secret of at least 32 bytes/],
          ['a secret that is not canonical base64url', good.replace(/"k":\s*"([^"]+)"/, '"k":"$1="'), /"k" is not canonical base64url/],
          [
            'an Ed25519 key at the identity point',
            JSON.stringify({ keys: [...keyEntries(file), IDENTITY_KEY] }),
            /keys\[\d+\] \(kid "ed-identity"\): EdDSA public key is a point of small order/,
          ],
        ];
        for (const [what, text, message] of broken) {
          from = server.stderr.length;
          if (text === null) rmSync(file);
          else writeFileSync(file, text, { mode: 0o600 });
          server.signal('SIGHUP');
          expect(await waitForReloadFailure(server, from), what).toMatch(message);
        }
        const failures = valueOf(await scrape(metricsPort), 'jwt_grpc_key_reload_failures_total');
        expect(failures).toBe(broken.length);
        expect(valueOf(await scrape(metricsPort), 'jwt_grpc_key_reloads_total')).toBe(2);
        const after = await askEveryConnection(pool, server.port, CONNECTIONS, 'ES256');
        expect(after.kids, 'the keys in use stayed').toEqual([newEs]);
        for (const client of after.clients) expect(await client.verifyJwt({ jwt: oldToken.jwt })).toMatchObject({ valid: true });
      } finally {
        const report = await load;
        pool.closeAll();
        console.log(`reload, ${mode}: ${okCount(report)} OK calls under load, errors ${JSON.stringify(errorsOf(report))}`);
        expect(errorsOf(report), 'non-OK responses under load').toEqual({});
        expect(okCount(report)).toBeGreaterThan(0);
      }
      server.signal('SIGTERM');
      expect((await server.closed).code).toBe(0);
    }, 120_000);
  }
});
