/**
 * Status-list indexes handed out block by block: disjoint across allocators that share one
 * reserve, the next block fetched in the background, a call held (not refused) while the
 * next block is on its way, none past the end of the list, and a reserve that fails,
 * stalls or answers nonsense reported, not turned into an index.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INDEX_WAIT_MS, IndexAllocator, localReserve } from '../../../src/revocation/status-list/allocator.js';

const MAX = 1 << 20;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function recordingLogger(): {
  lines: string[];
  info(m: string): void;
  warn(m: string, f?: object): void;
  error(m: string, f?: object): void;
} {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => void lines.push(`info ${m}`),
    warn: (m, f) => void lines.push(`warn ${m} ${JSON.stringify(f)}`),
    error: (m, f) => void lines.push(`error ${m} ${JSON.stringify(f)}`),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('localReserve', () => {
  it('hands out consecutive blocks from its start', async () => {
    const reserve = localReserve(10);
    expect([await reserve(4), await reserve(2), await reserve(1)]).toEqual([10, 14, 16]);
  });
});

describe('IndexAllocator', () => {
  it('gives two allocators sharing one reserve disjoint indexes, block by block', async () => {
    const reserve = localReserve();
    const a = new IndexAllocator({ reserve, size: MAX, blockSize: 8 });
    const b = new IndexAllocator({ reserve, size: MAX, blockSize: 8 });
    await Promise.all([a.start(), b.start()]);
    const seen = new Set<number>();
    for (let round = 0; round < 200; round++) {
      for (const allocator of [a, b]) {
        const idx = allocator.next();
        if (idx === undefined) continue;
        expect(seen.has(idx)).toBe(false);
        seen.add(idx);
      }
      // The next block is reserved in the background.
      await Promise.resolve();
    }
    expect(seen.size).toBeGreaterThan(300);
  });

  it('answers undefined once every index below its size is taken, never one past it, and says so once', async () => {
    const logger = recordingLogger();
    const allocator = new IndexAllocator({ reserve: localReserve(), size: 16, blockSize: 8, logger });
    await allocator.start();
    const got: Array<number | undefined> = [];
    for (let i = 0; i < 20; i++) {
      got.push(allocator.next());
      await turn();
    }
    expect(got.filter((idx) => idx !== undefined)).toEqual([...Array(16).keys()]);
    expect(got.slice(16)).toEqual([undefined, undefined, undefined, undefined]);
    expect(logger.lines).toEqual(['error status list: every index is taken, tokens cannot be issued {"size":16}']);
  });

  it('refuses to start on a reserve that answers no index', async () => {
    for (const answer of [-1, 1.5, Number.NaN]) {
      const allocator = new IndexAllocator({ reserve: () => Promise.resolve(answer), size: MAX, blockSize: 8 });
      await expect(allocator.start()).rejects.toThrow(`status list: reserve answered ${String(answer)}, not an index`);
    }
  });

  it('warns when a background reservation fails, answers undefined meanwhile, and tries again after a second', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const logger = recordingLogger();
    let calls = 0;
    const reserve = (count: number): Promise<number> => {
      calls++;
      return calls === 1 ? Promise.resolve(0) : calls === 2 ? Promise.reject(new Error('redis down')) : Promise.resolve(100 + count);
    };
    const allocator = new IndexAllocator({ reserve, size: MAX, blockSize: 2, logger });
    await allocator.start();
    expect(allocator.next()).toBe(0);
    await turn();
    expect(logger.lines).toEqual(['warn status list: cannot reserve indexes {"error":"redis down"}']);
    expect(allocator.next()).toBe(1);
    expect(allocator.next()).toBeUndefined();
    await turn();
    expect(calls).toBe(2);
    vi.advanceTimersByTime(1000);
    expect(allocator.next()).toBeUndefined();
    await turn();
    expect(calls).toBe(3);
    expect(allocator.next()).toBe(102);
  });

  it('holds a call at the block boundary until the block in flight arrives, in the order the calls came', async () => {
    const answers: Array<(first: number) => void> = [];
    const reserve = (): Promise<number> => new Promise((resolve) => answers.push(resolve));
    const allocator = new IndexAllocator({ reserve, size: MAX, blockSize: 4 });
    const started = allocator.start();
    answers.shift()?.(0);
    await started;
    expect([allocator.take(), allocator.take(), allocator.take(), allocator.take()]).toEqual([0, 1, 2, 3]);
    // The next block was asked for at half the block; it has not come back yet.
    expect(answers).toHaveLength(1);
    const held = [allocator.take(), allocator.take()];
    expect(held.every((idx) => idx instanceof Promise)).toBe(true);
    answers.shift()?.(100);
    expect(await Promise.all(held)).toEqual([100, 101]);
    expect(allocator.take()).toBe(102);
  });

  it('refuses a held call after INDEX_WAIT_MS when no block comes, and every held call when the store fails', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const answers: Array<{ resolve: (first: number) => void; reject: (err: Error) => void }> = [];
    const reserve = (): Promise<number> => new Promise((resolve, reject) => answers.push({ resolve, reject }));
    const allocator = new IndexAllocator({ reserve, size: MAX, blockSize: 2 });
    const started = allocator.start();
    answers.shift()?.resolve(0);
    await started;
    allocator.take();
    allocator.take();
    const late = allocator.take() as Promise<number>;
    const outcome = late.then(
      () => 'index',
      (err: Error) => err.message,
    );
    vi.advanceTimersByTime(INDEX_WAIT_MS);
    expect(await outcome).toBe(`no status list index is free: no block of indexes was reserved within ${INDEX_WAIT_MS} ms`);
    const failing = allocator.take() as Promise<number>;
    answers.shift()?.reject(new Error('redis down'));
    await expect(failing).rejects.toThrow('no status list index is free: its index store is unreachable (redis down)');
    // Within a second of the failure nothing is asked again: refused at once, not held.
    expect(() => allocator.take()).toThrow(expect.objectContaining({ code: 'ERR_STATUS_LIST_FULL' }));
  });
});
