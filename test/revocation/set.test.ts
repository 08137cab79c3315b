/**
 * The revoked jtis held in memory: each kept until its expiry, the later expiry of a jti
 * added twice, a status-list index added to a jti revoked without one, and a sweep that
 * drops exactly what expired, stale heap entries included.
 */
import { describe, expect, it } from 'vitest';
import { RevocationSet } from '../../src/revocation/set.js';

function clocked(start = 1000): { set: RevocationSet; at(now: number): void } {
  let now = start;
  return { set: new RevocationSet(() => now), at: (t) => void (now = t) };
}

describe('RevocationSet', () => {
  it('holds a revocation until its expiry, and answers has only for a string jti it holds', () => {
    const { set } = clocked();
    expect(set.add({ jti: 'a', expiresAt: 2000 })).toBe(true);
    expect([set.has('a'), set.has('b'), set.has(undefined), set.has(42)]).toEqual([true, false, false, false]);
    expect(set.get('a')).toEqual({ jti: 'a', expiresAt: 2000 });
    expect(set.size).toBe(1);
  });

  it('refuses a revocation already expired, or expiring now', () => {
    const { set } = clocked(1000);
    expect(set.add({ jti: 'past', expiresAt: 999 })).toBe(false);
    expect(set.add({ jti: 'now', expiresAt: 1000 })).toBe(false);
    expect(set.size).toBe(0);
  });

  it('keeps the later expiry of a jti added twice, saying whether anything changed', () => {
    const { set, at } = clocked();
    set.add({ jti: 'a', expiresAt: 2000 });
    expect(set.add({ jti: 'a', expiresAt: 1500 })).toBe(false);
    expect(set.add({ jti: 'a', expiresAt: 2000 })).toBe(false);
    expect(set.add({ jti: 'a', expiresAt: 3000, reason: 'later' })).toBe(true);
    expect(set.get('a')).toEqual({ jti: 'a', expiresAt: 3000, reason: 'later' });
    // The first expiry passing does not drop the later one.
    at(2500);
    expect(set.sweep()).toBe(0);
    expect(set.has('a')).toBe(true);
    at(3000);
    expect(set.sweep()).toBe(1);
    expect(set.has('a')).toBe(false);
  });

  it('adds a status-list index to a jti held without one, keeping its expiry, and never replaces one', () => {
    const { set } = clocked();
    set.add({ jti: 'a', expiresAt: 3000 });
    expect(set.add({ jti: 'a', expiresAt: 2000, statusIndex: 7 })).toBe(true);
    expect(set.get('a')).toEqual({ jti: 'a', expiresAt: 3000, statusIndex: 7 });
    expect(set.add({ jti: 'a', expiresAt: 2000, statusIndex: 8 })).toBe(false);
    expect(set.get('a')?.statusIndex).toBe(7);
  });

  it('sweeps in expiry order whatever the order added, dropping exactly what expired', () => {
    const { set, at } = clocked(0);
    const expiries = Array.from({ length: 2000 }, (_, i) => ((i * 7919) % 2000) + 1);
    for (const [i, expiresAt] of expiries.entries()) set.add({ jti: `j${i}`, expiresAt });
    at(500);
    expect(set.sweep()).toBe(500);
    expect(set.size).toBe(1500);
    expect([...set.values()].every((r) => r.expiresAt > 500)).toBe(true);
    at(2000);
    expect(set.sweep()).toBe(1500);
    expect(set.size).toBe(0);
    expect(set.sweep()).toBe(0);
  });
});
