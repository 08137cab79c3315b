/**
 * Status-list indexes handed out block by block: disjoint across allocators that share one
 * reserve, the next block fetched in the background, none past the end of the list, and a
 * reserve that fails or answers nonsense reported, not turned into an index.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IndexAllocator, localReserve } from '../../../src/revocation/status-list/allocator.js';

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

  it('answers undefined once the list is full, never an index past it, and says so once', async () => {
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
    expect(logger.lines).toEqual(['error status list is full: tokens cannot be issued until it is replaced {"size":16}']);
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
});
