/**
 * The Supervisor keeps its slots filled through a fork function: fake workers here, so
 * backoff, crash loops and replaced slots are checked on fake timers, without a process.
 */
import type { Worker } from 'node:cluster';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { MAX_BACKOFF_MS, QUICK_CRASH_MS, SPARE_FORK_DELAY_MS, Supervisor, backoffMs } from '../../src/cluster/supervisor.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';
import { type FakeWorker, fakeFork } from './fake-worker.js';

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

function supervise(workers: number, maxQuickRestarts = 5, graceMs = 10_000, spare = false) {
  const logger = recordingLogger();
  const { fork, forked } = fakeFork();
  const wired: Worker[] = [];
  const exited: Worker[] = [];
  const supervisor = new Supervisor({
    workers,
    spare,
    maxQuickRestarts,
    graceMs,
    logger,
    fork,
    forked: (w) => wired.push(w),
    exited: (w) => exited.push(w),
  });
  const ready = supervisor.ready.then(
    () => ({ ready: true }),
    (error: unknown) => ({ error }),
  );
  supervisor.start();
  const workerOf = (slot: number): FakeWorker => forked.filter((f) => f.index === slot).at(-1)!.worker;
  return { supervisor, logger, forked, wired, exited, ready, workerOf };
}

/** How long the supervisor waited before forking slot 0 again after its worker exited (fake time: only respawns are timed here). */
async function respawnDelay(run: ReturnType<typeof supervise>): Promise<number> {
  const before = run.forked.length;
  const exitedAt = Date.now();
  run.workerOf(0).exit(1);
  while (run.forked.length === before) {
    if (vi.getTimerCount() === 0) throw new Error('no respawn pending');
    await vi.advanceTimersToNextTimerAsync();
  }
  return Date.now() - exitedAt;
}

describe('backoffMs', () => {
  it('respawns at once after a first crash, then doubles from 100 ms up to its cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map(backoffMs)).toEqual([
      0,
      100,
      200,
      400,
      800,
      1600,
      MAX_BACKOFF_MS,
      MAX_BACKOFF_MS,
      MAX_BACKOFF_MS,
    ]);
  });
});

describe('Supervisor', () => {
  it('forks one worker per slot, wires each before it can speak, and is ready once every slot listens', async () => {
    const run = supervise(3);
    expect(run.forked.map((f) => f.index)).toEqual([0, 1, 2]);
    expect(run.wired).toEqual(run.forked.map((f) => f.worker));
    run.supervisor.listening(run.workerOf(0).asWorker);
    run.supervisor.listening(run.workerOf(2).asWorker);
    await vi.advanceTimersByTimeAsync(0);
    let settled = false;
    void run.ready.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    run.supervisor.listening(run.workerOf(1).asWorker);
    expect(await run.ready).toEqual({ ready: true });
    expect(run.logger.lines.filter((l) => l.message.endsWith(' started'))).toHaveLength(3);
  });

  it('waits longer after each quick crash in a row, up to the cap', async () => {
    const run = supervise(1, 1000);
    const delays: number[] = [];
    for (let i = 0; i < 9; i++) delays.push(await respawnDelay(run));
    expect(delays).toEqual([0, 100, 200, 400, 800, 1600, 2000, 2000, 2000]);
    expect(run.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toContain(
      `worker ${run.forked[5]!.worker.process.pid} exited; restarting in 1600 ms`,
    );
  });

  it('counts a crash after a good run (listening longer than QUICK_CRASH_MS) as the first again', async () => {
    const run = supervise(1, 1000);
    for (let i = 0; i < 4; i++) await respawnDelay(run); // 0, 100, 200, 400
    run.supervisor.listening(run.workerOf(0).asWorker);
    await vi.advanceTimersByTimeAsync(QUICK_CRASH_MS + 1);
    expect(await respawnDelay(run)).toBe(0);
    expect(await respawnDelay(run)).toBe(100);
  });

  it('replaces a worker that died in its slot: the same slot index, the others untouched', async () => {
    const run = supervise(2);
    for (const slot of [0, 1]) run.supervisor.listening(run.workerOf(slot).asWorker);
    await vi.advanceTimersByTimeAsync(5000);
    const [victim, survivor] = [run.workerOf(0), run.workerOf(1)];
    victim.exit(null, 'SIGKILL');
    expect(run.exited).toEqual([victim]);
    expect(run.supervisor.live()).toEqual([survivor]);
    await vi.advanceTimersByTimeAsync(0);
    expect(run.forked.map((f) => f.index)).toEqual([0, 1, 0]);
    const replacement = run.workerOf(0);
    expect(replacement).not.toBe(victim);
    expect(run.wired.at(-1)).toBe(replacement);
    expect(run.supervisor.live()).toEqual([replacement, survivor]);
    expect(run.logger.lines.find((l) => l.level === 'warn')).toMatchObject({
      message: `worker ${victim.process.pid} exited; restarting in 0 ms`,
      fields: { workerPid: victim.process.pid, slot: 0, code: null, signal: 'SIGKILL' },
    });
  });

  it('stops the cluster on a crash loop: fails the start with ERR_CLUSTER, forks no more, drains the others, exits 1', async () => {
    const run = supervise(2, 3, 60_000);
    for (let i = 0; i < 2; i++) await respawnDelay(run);
    run.workerOf(0).exit(7);
    const outcome = await run.ready;
    expect((outcome as { error: unknown }).error).toBeInstanceOf(JwtGrpcError);
    expect((outcome as { error: JwtGrpcError }).error).toMatchObject({ code: 'ERR_CLUSTER' });
    expect((outcome as { error: Error }).error.message).toMatch(
      /^worker slot 0 crashed 3 times in a row within 2000 ms of starting \(last: pid \d+, code 7, signal null\); stopping the cluster$/,
    );
    expect(run.logger.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    // The other slot's worker is asked to drain, with the crash loop's shorter grace.
    const other = run.workerOf(1);
    expect(other.sentOf('jwt-grpc:shutdown')).toEqual([{ type: 'jwt-grpc:shutdown', graceMs: 2000 }]);
    const forks = run.forked.length;
    await vi.advanceTimersByTimeAsync(10 * MAX_BACKOFF_MS);
    expect(run.forked.length).toBe(forks);
    // It ignored the shutdown: killed once the grace period and a second have passed.
    expect(other.signals).toEqual(['SIGKILL']);
    other.exit(null, 'SIGKILL');
    expect(await run.supervisor.done).toBe(1);
  });

  it('cannot respawn after a stop: a worker that exits while stopping is logged, not replaced', async () => {
    const run = supervise(2);
    run.supervisor.stop(0, 500);
    expect(run.supervisor.stopping).toBe(true);
    for (const slot of [0, 1])
      expect(run.workerOf(slot).sentOf('jwt-grpc:shutdown')).toEqual([{ type: 'jwt-grpc:shutdown', graceMs: 500 }]);
    run.workerOf(0).exit(0);
    run.workerOf(1).exit(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(run.forked).toHaveLength(2);
    expect(run.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(await run.supervisor.done).toBe(0);
    expect(run.workerOf(0).signals).toEqual([]);
  });

  it('cancels a pending respawn when stopped, and is done at once with no worker left', async () => {
    const run = supervise(1, 1000);
    await respawnDelay(run);
    await respawnDelay(run);
    run.workerOf(0).exit(1); // respawn due in 200 ms
    run.supervisor.stop(0, 1000);
    await vi.advanceTimersByTimeAsync(5000);
    expect(run.forked).toHaveLength(3);
    expect(await run.supervisor.done).toBe(0);
  });

  it('stops on an address that cannot be bound: ERR_LISTEN naming the address, every worker killed, exit 1; a second report changes nothing', async () => {
    const run = supervise(2);
    run.supervisor.cannotListen('address 10.9.9.9:1 is not local');
    const outcome = (await run.ready) as { error: JwtGrpcError };
    expect(outcome.error).toMatchObject({ code: 'ERR_LISTEN', field: 'address', message: 'address 10.9.9.9:1 is not local' });
    run.supervisor.cannotListen('again');
    for (const slot of [0, 1]) expect(run.workerOf(slot).signals).toEqual(['SIGKILL']);
    for (const slot of [0, 1]) run.workerOf(slot).exit(null, 'SIGKILL');
    expect(await run.supervisor.done).toBe(1);
    expect(run.forked).toHaveLength(2);
  });

  it('kill() kills every live worker and ends with 1 without waiting', async () => {
    const run = supervise(2);
    run.supervisor.kill();
    for (const slot of [0, 1]) expect(run.workerOf(slot).signals).toEqual(['SIGKILL']);
    expect(await run.supervisor.done).toBe(1);
  });
});

describe('Supervisor with a spare worker', () => {
  /** Two slots listening, the spare forked behind them and ready. */
  async function withReadySpare() {
    const run = supervise(2, 5, 10_000, true);
    expect(run.forked.map((f) => f.spare)).toEqual([false, false]);
    for (const slot of [0, 1]) run.supervisor.listening(run.workerOf(slot).asWorker);
    await vi.advanceTimersByTimeAsync(SPARE_FORK_DELAY_MS);
    const spare = run.forked.at(-1)!;
    expect(spare).toMatchObject({ index: 2, spare: true });
    run.supervisor.spareReady(spare.worker.asWorker);
    return { ...run, spare: spare.worker };
  }

  it('forks the spare SPARE_FORK_DELAY_MS after every slot listens; it is live (reloads reach it) but not serving', async () => {
    const run = supervise(2, 5, 10_000, true);
    run.supervisor.listening(run.workerOf(0).asWorker);
    await vi.advanceTimersByTimeAsync(SPARE_FORK_DELAY_MS);
    expect(run.forked).toHaveLength(2);
    run.supervisor.listening(run.workerOf(1).asWorker);
    await vi.advanceTimersByTimeAsync(SPARE_FORK_DELAY_MS - 1);
    expect(run.forked).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(run.forked).toHaveLength(3);
    const spare = run.forked[2]!.worker.asWorker;
    expect(run.supervisor.live()).toContain(spare);
    expect(run.supervisor.serving()).not.toContain(spare);
    expect(run.supervisor.serving()).toHaveLength(2);
  });

  it("gives a dead worker's slot to the ready spare at once, and forks the next spare once that slot listens", async () => {
    const run = await withReadySpare();
    const forks = run.forked.length;
    run.workerOf(0).exit(null, 'SIGKILL');
    expect(run.forked).toHaveLength(forks);
    expect(run.spare.sentOf('jwt-grpc:take-slot')).toHaveLength(1);
    expect(run.supervisor.serving()).toEqual([run.spare.asWorker, run.workerOf(1).asWorker]);
    expect(vi.getTimerCount()).toBe(0);
    run.supervisor.listening(run.spare.asWorker);
    await vi.advanceTimersByTimeAsync(SPARE_FORK_DELAY_MS);
    expect(run.forked.at(-1)).toMatchObject({ index: 2, spare: true });
    expect(run.forked).toHaveLength(forks + 1);
  });

  it('gives the slot to a spare still starting: it takes it once it says it is ready; no worker is forked into the slot', async () => {
    const run = supervise(2, 5, 10_000, true);
    for (const slot of [0, 1]) run.supervisor.listening(run.workerOf(slot).asWorker);
    await vi.advanceTimersByTimeAsync(SPARE_FORK_DELAY_MS);
    const spare = run.forked.at(-1)!.worker;
    const forks = run.forked.length;
    run.workerOf(1).exit(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(run.forked).toHaveLength(forks);
    expect(spare.sentOf('jwt-grpc:take-slot')).toHaveLength(0);
    run.supervisor.spareReady(spare.asWorker);
    expect(spare.sentOf('jwt-grpc:take-slot')).toHaveLength(1);
    expect(run.supervisor.serving()).toContain(spare.asWorker);
  });

  it('forks the slot as without a spare once a slot crashes quickly again (backoff applies)', async () => {
    const run = await withReadySpare();
    run.workerOf(1).exit(1);
    run.supervisor.spareReady(run.spare.asWorker);
    const promoted = run.spare;
    const forks = run.forked.length;
    promoted.exit(1); // the slot's second quick crash in a row: 100 ms of backoff, then a fork
    await vi.advanceTimersByTimeAsync(99);
    expect(run.forked).toHaveLength(forks);
    await vi.advanceTimersByTimeAsync(1);
    expect(run.forked.at(-1)).toMatchObject({ index: 1, spare: false });
  });

  it('replaces a spare that exits with a new spare, and a stop ends the spare too', async () => {
    const run = await withReadySpare();
    run.spare.exit(1);
    await vi.advanceTimersByTimeAsync(0);
    const next = run.forked.at(-1)!;
    expect(next).toMatchObject({ index: 2, spare: true });
    expect(run.supervisor.serving()).toHaveLength(2);
    run.supervisor.stop(0, 1000);
    expect(next.worker.signals).toEqual(['SIGTERM']);
    expect(run.workerOf(0).sentOf('jwt-grpc:shutdown')).toHaveLength(1);
  });

  it('ends a spare still starting at once on a stop: it would miss the shutdown message and wait out the grace period', async () => {
    const run = supervise(2, 5, 10_000, true);
    for (const slot of [0, 1]) run.supervisor.listening(run.workerOf(slot).asWorker);
    await vi.advanceTimersByTimeAsync(SPARE_FORK_DELAY_MS);
    const spare = run.forked.at(-1)!.worker;
    run.supervisor.stop(0, 10_000);
    expect(spare.signals).toEqual(['SIGTERM']);
    expect(spare.sentOf('jwt-grpc:shutdown')).toEqual([]);
  });
});
