/**
 * `--watch-keys`: the server reloads its key file by itself, however the file changes:
 * rewritten in place, renamed over (as `jwt-grpc keys rotate` does), or swapped the way
 * the kubelet updates a mounted Kubernetes Secret (a new timestamped directory, and a
 * `..data` symlink renamed over the old one, the file itself a symlink through `..data`).
 * An event that leaves the content as it was reloads nothing.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../bench/kit/wait.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { reliabilityFixture } from '../reliability/fixture.js';
import { keyEntries } from './helpers.js';
import { askEveryConnection, jsonLines, keysCli, waitForReload } from './reload-helpers.js';

describe.skipIf(process.platform !== 'linux')('--watch-keys', () => {
  const fixture = reliabilityFixture('watch');

  for (const workers of [1, 2]) {
    it(`${workers === 1 ? 'single process' : `cluster of ${workers}`}: an in-place rewrite, a rename over the file, and a touch`, async () => {
      const pool = new ClientPool();
      const file = join(fixture.dir, `keys-${workers}.json`);
      await keysCli('generate', '--alg', 'HS256', '--out', file, '--force');
      const server = await fixture.serve({ workers, graceMs: 2000, keysFile: file, args: ['--watch-keys', '--log-format', 'json'] });
      try {
        // A rename over the file: what `keys rotate` does.
        let from = server.stderr.length;
        await keysCli('rotate', '--keys', file, '--alg', 'HS256', '--kid', 'hs-renamed');
        await waitForReload(server, from, 'hs-renamed', 'signs');

        // An in-place rewrite: same inode, new content.
        from = server.stderr.length;
        const rewritten = JSON.stringify({
          keys: keyEntries(file).map((entry) => (entry['kid'] === 'hs-renamed' ? { ...entry, kid: 'hs-rewritten' } : entry)),
        });
        writeFileSync(file, rewritten);
        await waitForReload(server, from, 'hs-rewritten', 'signs');
        expect((await askEveryConnection(pool, server.port, 4, 'HS256')).kids).toEqual(['hs-rewritten']);

        // A touch changes no byte: no reload.
        from = server.stderr.length;
        utimesSync(file, new Date(), new Date());
        await sleep(1500);
        expect(jsonLines(server, from).filter((line) => String(line['message']).includes('reload'))).toEqual([]);
      } finally {
        pool.closeAll();
      }
    }, 60_000);
  }

  it('a Kubernetes Secret volume update: the ..data symlink swapped, the file never written', async () => {
    const pool = new ClientPool();
    // The kubelet's layout: keys.json -> ..data/keys.json, ..data -> ..<timestamp>/
    const mount = join(fixture.dir, 'secret-volume');
    mkdirSync(join(mount, '..2026_11_23_10_00_00.1'), { recursive: true });
    const first = join(mount, '..2026_11_23_10_00_00.1', 'keys.json');
    await keysCli('generate', '--alg', 'HS256', '--alg', 'ES256', '--kid', 'hs-v1', '--kid', 'es-v1', '--out', first);
    symlinkSync('..2026_11_23_10_00_00.1', join(mount, '..data'));
    symlinkSync(join('..data', 'keys.json'), join(mount, 'keys.json'));
    const server = await fixture.serve({
      workers: 2,
      graceMs: 2000,
      keysFile: join(mount, 'keys.json'),
      args: ['--watch-keys', '--log-format', 'json'],
    });
    try {
      // The update: a new directory with the new content, a new symlink renamed over ..data, the old directory removed.
      const next = join(mount, '..2026_11_23_10_05_00.2');
      mkdirSync(next);
      const copy = join(next, 'keys.json');
      writeFileSync(copy, readFileSync(first), { mode: 0o600 });
      await keysCli('rotate', '--keys', copy, '--alg', 'ES256', '--stage', '--kid', 'es-v2');
      const from = server.stderr.length;
      symlinkSync('..2026_11_23_10_05_00.2', join(mount, '..data_tmp'));
      renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
      rmSync(join(mount, '..2026_11_23_10_00_00.1'), { recursive: true });
      await waitForReload(server, from, 'es-v2', 'verify-only');
      for (const kids of (await askEveryConnection(pool, server.port, 4, 'ES256')).published) expect(kids).toEqual(['es-v2', 'es-v1']);
    } finally {
      pool.closeAll();
    }
  }, 60_000);
});
