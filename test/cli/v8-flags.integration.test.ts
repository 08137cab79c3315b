/**
 * `jwt-grpc serve` gives its cluster workers its young-generation setting unless the user
 * chose one, and does not restart a single process for it (a second Node start).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { SERVE_V8_FLAGS } from '../../src/cli/v8-flags.js';

/** node's own flags of a process: its command line before the script. */
function nodeFlags(pid: number): string[] {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return argv.slice(
    1,
    argv.findIndex((arg) => arg.endsWith('jwt-grpc.js')),
  );
}

afterEach(() => killAll());

describe('serve V8 flags', () => {
  it('a single process starts once, with node as it was started (no restart to add them)', async () => {
    const server = await startCli(serveArgs());
    expect(nodeFlags(server.pid)).toEqual([]);
  });

  it('cluster workers start with them; the primary, which serves no call, is not restarted', async () => {
    const server = await startCli(serveArgs(), { env: { NODEMAXPROCS: '2' } });
    expect(server.workerPids).toHaveLength(2);
    expect(nodeFlags(server.pid)).toEqual([]);
    for (const pid of server.workerPids) expect(nodeFlags(pid)).toEqual([...SERVE_V8_FLAGS]);
  });

  it("the user's own setting wins: NODE_OPTIONS or node's flags", async () => {
    const viaEnv = await startCli(serveArgs(), { env: { NODEMAXPROCS: '2', NODE_OPTIONS: '--max-semi-space-size=16' } });
    for (const pid of viaEnv.workerPids) expect(nodeFlags(pid)).toEqual([]);
    const viaFlag = await startCli(serveArgs(), { env: { NODEMAXPROCS: '2' }, nodeArgs: ['--max-semi-space-size=8'] });
    for (const pid of viaFlag.workerPids) expect(nodeFlags(pid)).toEqual(['--max-semi-space-size=8']);
  });
});
