/**
 * Cluster mode through the CLI (NODEMAXPROCS=2), on each transport: workers share one
 * port and the primary's keys, a killed worker is replaced, SIGTERM drains. Once: bad
 * settings and crash loops end the primary instead of forking forever.
 *
 * The primary hands each new TCP connection to the next worker (round robin), so the
 * tests open several channels, each with its own connection (a distinct
 * `grpc.primary_user_agent` keeps grpc-js from sharing one subchannel). Workers do not
 * report their pid; that two of them answer shows in their subject pools instead: each
 * worker has its own round-robin position, so the first subject-less call on each
 * worker gets the pool's first subject.
 */
import { readFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SUBJECTS_FILE } from '../../bench/kit/paths.js';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { type CliServer, runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { isAlive } from '../../bench/kit/proc.js';
import { ClientPool, type JwtClient } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';

const SUBJECTS = JSON.parse(readFileSync(SUBJECTS_FILE, 'utf8')) as string[];
const FIRST_SUBJECT = SUBJECTS[0] as string;

const clients = new ClientPool();
let channelCount = 0;

/** A client on a connection of its own. */
function freshClient(port: number): JwtClient {
  channelCount += 1;
  return clients.jwt(port, { channelOptions: { 'grpc.primary_user_agent': `cluster-test-${channelCount}` } });
}

function workerPids(cli: CliServer): number[] {
  const match = /workers: 2 pids (\d+), (\d+)/.exec(cli.stdout);
  if (match === null) throw new Error(`no "workers: 2 pids A, B" line in:\n${cli.stdout}`);
  return [Number(match[1]), Number(match[2])];
}

/** The workers forked into a slot (the spare's line says `started as the spare`). */
function startedPids(stderr: string): number[] {
  return [...stderr.matchAll(/worker (\d+) started(?! as the spare)/g)].map((m) => Number(m[1]));
}

afterAll(async () => {
  clients.closeAll();
  await killAll();
});

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  describe('a cluster of two workers', () => {
    let cli: CliServer;

    beforeAll(async () => {
      cli = await startCli(serveArgs(...transportArgs(transport), '--subjects', SUBJECTS_FILE), { env: { NODEMAXPROCS: '2' } });
    });

    afterAll(async () => {
      clients.closeAll();
      await killAll();
    });

    it('announces its transport and two workers with distinct pids, and warns once about ephemeral keys', () => {
      expect(cli.stdout).toContain(`, ${transport} server`);
      const [a, b] = workerPids(cli);
      expect(a).not.toBe(b);
      for (const pid of [a, b] as number[]) {
        expect(pid).not.toBe(cli.pid);
        expect(isAlive(pid)).toBe(true);
      }
      expect(startedPids(cli.stderr).sort()).toEqual([a, b].sort());
      expect(cli.stdout).toContain(`  primary: pid ${cli.pid} (SIGHUP reloads the keys and the policy, SIGTERM drains)\n`);
      // Keys are made once, in the primary.
      expect(cli.stderr.match(/EPHEMERAL/g)).toHaveLength(1);
    });

    it('answers from both workers (each with its own subject pool position)', async () => {
      const firsts: string[] = [];
      for (let i = 0; i < 8 && firsts.filter((sub) => sub === FIRST_SUBJECT).length < 2; i++) {
        firsts.push((await freshClient(cli.port).generateJwt({ algorithm: 'HS256' })).sub);
      }
      // One process would have handed out SUBJECTS[0], [1], [2]...; two hand out [0] twice.
      expect(firsts.filter((sub) => sub === FIRST_SUBJECT)).toHaveLength(2);
    });

    it('verifies over every connection a token made over any other (the keys are shared)', async () => {
      const channels = Array.from({ length: 4 }, () => freshClient(cli.port));
      const made = await Promise.all(
        channels.map((c, i) => c.generateJwt({ algorithm: i % 2 === 0 ? 'ES256' : 'HS256', subject: `conn-${i}` })),
      );
      for (const [i, token] of made.entries()) {
        for (const c of channels) expect(await c.verifyJwt({ jwt: token.jwt })).toMatchObject({ valid: true, sub: `conn-${i}` });
      }
      const kids = new Set(made.map((m) => m.kid));
      expect(kids.size).toBe(2); // one ES256 kid and one HS256 kid across both workers
    });

    it('replaces a worker killed with SIGKILL by the spare, starts a new spare, and keeps answering', async () => {
      const before = await freshClient(cli.port).generateJwt({ algorithm: 'EdDSA', subject: 'before-kill' });
      const [victim, survivor] = workerPids(cli) as [number, number];
      expect(await waitUntil(() => /spare worker \d+ ready/.test(cli.stderr), 10_000, 10), 'no spare worker became ready').toBe(true);
      const spare = Number(/spare worker (\d+) ready/.exec(cli.stderr)?.[1]);
      const from = cli.stderr.length;
      const t0 = Date.now();
      process.kill(victim, 'SIGKILL');
      const replaced = await waitUntil(() => cli.stderr.includes(`worker ${victim} exited; the spare ${spare} takes its slot`), 10_000, 10);
      expect(replaced, `the spare ${spare} taking the slot of ${victim}`).toBe(true);
      const restartMs = Date.now() - t0;
      expect(restartMs, `slot taken after ${restartMs} ms`).toBeLessThan(2500);
      expect(startedPids(cli.stderr.slice(from)), 'a worker forked into the slot though the spare was ready').toEqual([]);
      expect(await waitUntil(() => /worker \d+ started as the spare/.test(cli.stderr.slice(from)), 10_000, 10), 'no new spare').toBe(true);
      expect(isAlive(survivor)).toBe(true);

      // New connections are served (by the survivor, and the replacement once it listens).
      const c = freshClient(cli.port);
      expect((await c.generateJwt({ algorithm: 'HS256', subject: 'after-kill' })).sub).toBe('after-kill');
      expect(await c.verifyJwt({ jwt: before.jwt })).toMatchObject({ valid: true, sub: 'before-kill' });

      // The spare answers now: its fresh pool hands out the first subject again.
      let replacementServed = false;
      for (let i = 0; i < 20 && !replacementServed; i++) {
        replacementServed = (await freshClient(cli.port).generateJwt({ algorithm: 'HS256' })).sub === FIRST_SUBJECT;
        if (!replacementServed) await sleep(100);
      }
      expect(replacementServed).toBe(true);
      expect(cli.exit).toBeUndefined();
    });
  });

  describe('stopping', () => {
    afterEach(async () => {
      clients.closeAll();
      await killAll();
    });

    it('drains on SIGTERM: calls in flight finish OK, workers exit, the primary exits 0', async () => {
      const cli = await startCli(serveArgs(...transportArgs(transport)), { env: { NODEMAXPROCS: '2' } });
      const workers = workerPids(cli);
      const channels = Array.from({ length: 4 }, () => freshClient(cli.port));
      // Connect every channel first, so the burst below is all in flight at once.
      await Promise.all(channels.map((c) => c.generateJwt({ algorithm: 'HS256', subject: 'warm-up' })));

      // Each channel's first answer: by then that worker has the channel's other calls in hand.
      const firstAnswers: Promise<void>[] = [];
      const calls = channels.flatMap((c, ci) => {
        let answered!: () => void;
        firstAnswers.push(new Promise<void>((resolve) => (answered = resolve)));
        return Array.from({ length: 40 }, (_, i) =>
          c.generateJwt({ algorithm: 'RS256', subject: `burst-${ci}-${i}` }).then((res) => {
            answered();
            return res;
          }),
        );
      });
      await Promise.all(firstAnswers);
      cli.signal('SIGTERM');

      const results = await Promise.allSettled(calls);
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
      expect(failed).toEqual([]);
      expect(results).toHaveLength(160);
      const exit = await cli.exited;
      expect(exit, cli.stderr).toEqual({ code: 0, signal: null });
      expect(cli.stderr).toContain('draining all workers');
      for (const pid of workers) expect(await waitUntil(() => !isAlive(pid), 5000), `worker ${pid} to exit`).toBe(true);
    });
  });
});

describe('bad settings', () => {
  afterEach(async () => {
    await killAll();
  });

  it('exits 2 with a message naming NODEMAXPROCS when it is not a number', async () => {
    const result = await runCli(serveArgs(), { env: { NODEMAXPROCS: 'abc' } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/NODEMAXPROCS/);
    expect(result.stdout).not.toContain('listening');
  });

  it('stops at once with one line when the port is taken (no respawns: they cannot help)', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as { port: number }).port;
      const t0 = Date.now();
      const result = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port)], {
        env: { NODEMAXPROCS: '2' },
        timeoutMs: 15_000,
      });
      expect(result.code, result.stderr).toBe(1);
      expect(Date.now() - t0).toBeLessThan(3_000);
      // Besides the ephemeral-keys warning, the one error; the primary binds before it forks, so no worker started.
      const lines = result.stderr.split('\n').filter((line) => line !== '' && !/EPHEMERAL/.test(line));
      expect(lines).toEqual([`jwt-grpc: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`]);
      expect(startedPids(result.stderr)).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
