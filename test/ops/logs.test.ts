/**
 * `--log-format json` and `--log-level`: one JSON object per line with time, level, pid,
 * worker (in a cluster), message and the line's fields; levels below the chosen one left
 * out; text stays the default.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { reliabilityFixture } from '../reliability/fixture.js';
import { jsonLines, keysCli } from './reload-helpers.js';
import { waitUntil } from '../../bench/kit/wait.js';

describe.skipIf(process.platform !== 'linux')('logs', () => {
  const fixture = reliabilityFixture('logs');

  it('json: every stderr line is an object with time, level, pid, worker, message and fields', async () => {
    const file = join(fixture.dir, 'keys.json');
    await keysCli('generate', '--alg', 'HS256', '--out', file, '--force');
    const server = await fixture.serve({ workers: 2, graceMs: 2000, keysFile: file, args: ['--log-format', 'json'] });
    server.signal('SIGHUP');
    expect(
      await waitUntil(() => jsonLines(server).filter((line) => String(line['message']).endsWith('reloaded keys')).length === 2, 15_000),
    ).toBe(true);
    server.signal('SIGTERM');
    expect((await server.closed).code).toBe(0);

    const lines = server.stderr.trim().split('\n');
    const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const object of objects) {
      expect(Object.keys(object).slice(0, 3)).toEqual(['level', 'time', 'pid']);
      expect(['info', 'warn', 'error']).toContain(object['level']);
      expect(new Date(object['time'] as string).toISOString()).toBe(object['time']);
      expect(typeof object['message']).toBe('string');
      expect(object['worker'] === 'primary' || typeof object['worker'] === 'number', JSON.stringify(object)).toBe(true);
    }
    const started = objects.filter((object) => /^worker \d+ started$/.test(object['message'] as string));
    expect(started).toHaveLength(2);
    for (const line of started)
      expect(line).toMatchObject({ worker: 'primary', pid: server.pid, slot: expect.any(Number), workerPid: expect.any(Number) });
    const reloaded = objects.filter((object) => String(object['message']).endsWith('reloaded keys'));
    expect(reloaded.map((line) => line['worker']).sort()).toEqual([0, 1]);
    expect(reloaded.map((line) => line['pid']).sort()).toEqual([...server.workerPids].sort());
    expect(
      objects.some(
        (object) => object['message'] === 'draining all workers: no new calls; calls in flight may finish' && object['graceMs'] === 2000,
      ),
    ).toBe(true);
  }, 60_000);

  it('--log-level warn leaves info lines out; error leaves warnings out; text is the default', async () => {
    const warn = await startCli(serveArgs('--log-level', 'warn'));
    expect(warn.stderr).toMatch(/^jwt-grpc warn: no keys configured: generated EPHEMERAL keys/);
    warn.signal('SIGTERM');
    await warn.closed;
    expect(warn.stderr).not.toMatch(/info:/);

    const error = await startCli(serveArgs('--log-level', 'error', '--log-format', 'json'));
    error.signal('SIGTERM');
    expect((await error.closed).code).toBe(0);
    expect(error.stderr).toBe('');
  }, 30_000);
});
