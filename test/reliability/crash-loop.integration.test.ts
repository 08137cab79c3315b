/**
 * A worker that dies as it starts makes the primary give up, not fork forever: a module
 * preloaded through NODE_OPTIONS ends every cluster worker (never the primary) with exit
 * code 3 before it listens. The CLI must exit non-zero with a message saying why, within
 * seconds, having forked a bounded number of workers, none of them left running (within
 * 3 s of the primary's exit). A taken port is no crash loop: the cluster stops at once,
 * naming the address, as the single-process server does. On each transport.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil, within } from '../../bench/kit/wait.js';
import { launchCli } from '../../bench/kit/cli.js';
import { isAlive } from '../../bench/kit/proc.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';
import { reliabilityFixture } from './fixture.js';

/** maxQuickRestarts' default (src/options/table.ts): crashes of one slot before the primary stops. */
const MAX_QUICK_RESTARTS = 5;

describe.skipIf(process.platform !== 'linux').each(TRANSPORTS)('transport %s: a crash-looping worker stops the cluster', (transport) => {
  reliabilityFixture('crash-loop');
  let blocker: Server;
  let port: number;
  let crashDir: string;
  let crashModule: string;

  beforeAll(async () => {
    blocker = createServer((socket) => socket.destroy());
    port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
    crashDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-crash-'));
    crashModule = join(crashDir, 'crash-worker.mjs');
    writeFileSync(crashModule, "import cluster from 'node:cluster';\nif (cluster.isWorker) process.exit(3);\n");
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    rmSync(crashDir, { recursive: true, force: true });
  });

  it('NODEMAXPROCS=2 with workers that die as they start: the primary exits non-zero with a message, forks a bounded number of workers, leaves none', async () => {
    const started = Date.now();
    const cli = launchCli(['serve', ...transportArgs(transport), '--host', '127.0.0.1', '--port', '0'], {
      env: { NODEMAXPROCS: '2', NODE_OPTIONS: `--import=${crashModule}` },
    });
    const exit = await within(cli.closed, 30_000);
    const elapsedMs = Date.now() - started;
    const forked = [...cli.stderr.matchAll(/worker (\d+) started/g)].map((m) => Number(m[1]));
    console.log(
      `crash loop, cluster on ${transport}: exit ${exit?.code ?? 'none (still running after 30 s)'} after ${elapsedMs} ms, ${forked.length} workers forked; ` +
        `last stderr lines:\n${cli.stderr.trim().split('\n').slice(-3).join('\n')}`,
    );
    expect(exit, 'the primary was still running after 30 s').toBeDefined();
    expect(exit?.code).not.toBe(0);
    expect(exit?.code).not.toBeNull();
    expect(cli.stderr).toMatch(/crashed \d+ times in a row.*stopping the cluster/);
    expect(cli.stdout).not.toMatch(/listening on/);
    // Each of the 2 slots forks at most MAX_QUICK_RESTARTS times before the primary stops.
    expect(forked.length).toBeGreaterThanOrEqual(MAX_QUICK_RESTARTS);
    expect(forked.length).toBeLessThanOrEqual(2 * MAX_QUICK_RESTARTS);
    // The primary exits as soon as it gives up; a worker forked just before is orphaned
    // and ends by itself once its IPC channel is gone (measured: within 500 ms).
    const sinceExitMs = performance.now() - (cli.exitedAt ?? performance.now());
    const gone = await waitUntil(() => forked.every((pid) => !isAlive(pid)), Math.max(0, 3000 - sinceExitMs));
    expect(gone, `workers still running 3 s after the primary exited: ${forked.filter((pid) => isAlive(pid)).join(', ')}`).toBe(true);
  }, 60_000);

  it('NODEMAXPROCS=2 on a taken port: no crash loop, the cluster stops at once naming the address', async () => {
    const cli = launchCli(['serve', ...transportArgs(transport), '--host', '127.0.0.1', '--port', String(port)], {
      env: { NODEMAXPROCS: '2' },
    });
    const exit = await within(cli.closed, 15_000);
    expect(exit?.code).toBe(1);
    expect(cli.stderr).toContain(`127.0.0.1:${port}`);
    expect(cli.stderr).not.toMatch(/restarting in/);
  }, 30_000);

  it('single process on a taken port: exits non-zero at once with a message naming the address', async () => {
    const cli = launchCli(['serve', ...transportArgs(transport), '--host', '127.0.0.1', '--port', String(port)], {
      env: { NODEMAXPROCS: '1' },
    });
    const exit = await within(cli.closed, 15_000);
    console.log(`crash loop, single on ${transport}: exit ${exit?.code ?? 'none'}; ${cli.stderr.trim().split('\n').slice(-1)[0]}`);
    expect(exit?.code).toBe(1);
    expect(cli.stderr).toContain(`127.0.0.1:${port}`);
  }, 30_000);
});
