/**
 * The revocations a server holds and the store behind them: what the store loads and sends
 * told to the listeners once, a revoke written to the store before it counts, a token revoked
 * by many calls at once written once, a failed write leaving nothing held, and the store's
 * health reported except for a cluster worker's relay.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/base/log.js';
import { RELAYED_STORE_KIND, Revocations } from '../../src/revocation/revocations.js';
import type { Revocation, RevocationStore } from '../../src/contracts/revocation-store.js';

const FUTURE = 4_000_000_000;

class MemoryStore implements RevocationStore {
  kind = 'memory';
  up = true;
  added: Revocation[] = [];
  fail: Error | undefined;
  closed = false;
  onRevoked: ((revocations: readonly Revocation[]) => void) | undefined;
  constructor(readonly loaded: readonly Revocation[] = []) {}
  async start(onRevoked: (revocations: readonly Revocation[]) => void): Promise<void> {
    this.onRevoked = onRevoked;
    onRevoked(this.loaded);
  }
  async add(revocation: Revocation): Promise<void> {
    await Promise.resolve();
    if (this.fail !== undefined) throw this.fail;
    this.added.push(revocation);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

function logger(): { lines: string[]; info(m: string): void; warn(): void; error(): void } {
  const lines: string[] = [];
  return { lines, info: (m) => void lines.push(m), warn: () => {}, error: () => {} };
}

describe('Revocations', () => {
  it('holds what the store loads, logs the count, relays it, and tells listeners of what is new once', async () => {
    const store = new MemoryStore([{ jti: 'a', expiresAt: FUTURE }]);
    const revocations = new Revocations(store);
    const told: string[][] = [];
    const relayed: string[][] = [];
    revocations.subscribe((list) => told.push(list.map((r) => r.jti)));
    const log = logger();
    await revocations.start(log, (list) => relayed.push(list.map((r) => r.jti)));
    expect(revocations.has('a')).toBe(true);
    expect(log.lines).toEqual(['revocations: 1 loaded from the memory store']);
    store.onRevoked?.([
      { jti: 'a', expiresAt: FUTURE },
      { jti: 'b', expiresAt: FUTURE },
    ]);
    expect(told).toEqual([['a'], ['b']]);
    expect(relayed).toEqual([['a'], ['a', 'b']]);
    expect(revocations.size).toBe(2);
    await revocations.close();
    expect(store.closed).toBe(true);
  });

  it('writes a revoke to the store before holding it, and says false for one held already', async () => {
    const store = new MemoryStore();
    const revocations = new Revocations(store);
    await revocations.start(silentLogger);
    const told: string[] = [];
    revocations.subscribe((list) => told.push(...list.map((r) => r.jti)));
    expect(await revocations.revoke({ jti: 'x', expiresAt: FUTURE })).toBe(true);
    expect(await revocations.revoke({ jti: 'x', expiresAt: FUTURE })).toBe(false);
    expect(store.added).toEqual([{ jti: 'x', expiresAt: FUTURE }]);
    expect(told).toEqual(['x']);
    expect(revocations.expiresAt('x')).toBe(FUTURE);
    await revocations.close();
  });

  it('writes a token revoked by many calls at once to the store once', async () => {
    const store = new MemoryStore();
    const revocations = new Revocations(store);
    await revocations.start(silentLogger);
    const results = await Promise.all(Array.from({ length: 10 }, () => revocations.revoke({ jti: 'x', expiresAt: FUTURE })));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(store.added).toHaveLength(1);
    await revocations.close();
  });

  it('stores the status-list index of a jti revoked before without one, keeping the later expiry', async () => {
    const store = new MemoryStore();
    const revocations = new Revocations(store);
    await revocations.start(silentLogger);
    await revocations.revoke({ jti: 'x', expiresAt: FUTURE });
    expect(await revocations.revoke({ jti: 'x', expiresAt: FUTURE - 10, statusIndex: 3 })).toBe(true);
    expect(store.added[1]).toEqual({ jti: 'x', expiresAt: FUTURE, statusIndex: 3 });
    expect(revocations.values()).toEqual([{ jti: 'x', expiresAt: FUTURE, statusIndex: 3 }]);
    await revocations.close();
  });

  it('holds nothing when the store refuses the write, and passes its error on', async () => {
    const store = new MemoryStore();
    const revocations = new Revocations(store);
    await revocations.start(silentLogger);
    store.fail = new Error('disk full');
    await expect(revocations.revoke({ jti: 'x', expiresAt: FUTURE })).rejects.toThrow('disk full');
    expect(revocations.has('x')).toBe(false);
    store.fail = undefined;
    expect(await revocations.revoke({ jti: 'x', expiresAt: FUTURE })).toBe(true);
    await revocations.close();
  });

  it("reports the store's kind and health, none for a cluster worker's relay or without a store", async () => {
    const store = new MemoryStore();
    store.up = false;
    expect([new Revocations(store).storeKind, new Revocations(store).storeUp]).toEqual(['memory', false]);
    const relay = new MemoryStore();
    relay.kind = RELAYED_STORE_KIND;
    const log = logger();
    const relayed = new Revocations(relay);
    await relayed.start(log);
    expect([relayed.storeKind, relayed.storeUp, log.lines]).toEqual(['primary', undefined, []]);
    const none = new Revocations();
    await none.start(silentLogger);
    expect([none.storeKind, none.storeUp, none.reserveStatusIndexes]).toEqual([undefined, undefined, undefined]);
    expect(await none.revoke({ jti: 'y', expiresAt: FUTURE })).toBe(true);
    await none.close();
  });

  it('passes status-list reservations to the store that makes them, bound to it', async () => {
    const store = Object.assign(new MemoryStore(), {
      next: 100,
      async reserveStatusIndexes(this: { next: number }, count: number): Promise<number> {
        const first = this.next;
        this.next += count;
        return first;
      },
    });
    const reserve = new Revocations(store).reserveStatusIndexes;
    expect([await reserve?.(10), await reserve?.(1)]).toEqual([100, 110]);
    expect(new Revocations(new MemoryStore()).reserveStatusIndexes).toBeUndefined();
  });

  it('drops expired entries on sweep', async () => {
    let now = 1000;
    const revocations = new Revocations(undefined, () => now);
    revocations.receive([
      { jti: 'a', expiresAt: 1500 },
      { jti: 'b', expiresAt: 2500 },
    ]);
    now = 2000;
    expect(revocations.sweep()).toBe(1);
    expect([revocations.has('a'), revocations.has('b')]).toEqual([false, true]);
    await revocations.close();
  });
});
