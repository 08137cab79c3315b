/**
 * `jwt-grpc serve` runs with its young-generation setting unless the user chose one: a
 * process restarted in place (same pid), its cluster workers too.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { SERVE_V8_FLAGS } from '../../src/cli/v8-flags.js';

function nodeFlags(pid: number): string[] {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return argv.slice(
    1,
    argv.findIndex((arg) => arg.endsWith('jwt-grpc.js')),
  );
}

afterEach(() => killAll());

describe('serve V8 flags', () => {
  it('a single process runs with them, in the process the CLI started (same pid)', async () => {
    const server = await startCli(serveArgs());
    expect(nodeFlags(server.pid)).toEqual(expect.arrayContaining([...SERVE_V8_FLAGS]));
  });

  it('cluster workers inherit them', async () => {
    const server = await startCli(serveArgs(), { env: { NODEMAXPROCS: '2' } });
    expect(server.workerPids).toHaveLength(2);
    for (const pid of server.workerPids) expect(nodeFlags(pid)).toEqual(expect.arrayContaining([...SERVE_V8_FLAGS]));
  });

  it("the user's own setting wins: NODE_OPTIONS or node's flags", async () => {
    const viaEnv = await startCli(serveArgs(), { env: { NODE_OPTIONS: '--max-semi-space-size=16' } });
    expect(nodeFlags(viaEnv.pid)).toEqual([]);
    const viaFlag = await startCli(serveArgs(), { nodeArgs: ['--max-semi-space-size=8'] });
    expect(nodeFlags(viaFlag.pid)).toEqual(['--max-semi-space-size=8']);
  });
});
