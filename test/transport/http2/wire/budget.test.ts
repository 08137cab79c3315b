/**
 * The token bucket behind the rapid-reset, refused-stream and glitch guards: a burst taken at
 * once, then a refusal, then tokens back at the rate, never more than the burst.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Budget, MemoryLedger } from '../../../../src/transport/http2/wire/budget.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** performance.now() under the test's control. */
function clock(start: number): { advance(ms: number): void } {
  let now = start;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
  return {
    advance(ms: number): void {
      now += ms;
    },
  };
}

describe('Budget', () => {
  it('allows the burst at once and refuses the next take', () => {
    clock(1_000_000);
    const budget = new Budget(3, 1);
    expect([budget.take(), budget.take(), budget.take()]).toEqual([true, true, true]);
    expect(budget.take()).toBe(false);
  });

  it('gives tokens back at the rate per second', () => {
    const time = clock(1_000_000);
    const budget = new Budget(2, 10);
    budget.take();
    budget.take();
    expect(budget.take()).toBe(false);
    // 100 ms at 10 per second is one token, which the refused take above had overdrawn.
    time.advance(100);
    expect(budget.take()).toBe(false);
    time.advance(200);
    expect(budget.take()).toBe(true);
  });

  it('never holds more than the burst, however long it was idle', () => {
    const time = clock(1_000_000);
    const budget = new Budget(2, 1000);
    time.advance(60_000);
    expect([budget.take(), budget.take()]).toEqual([true, true]);
    expect(budget.take()).toBe(false);
  });
});

describe('MemoryLedger', () => {
  it('starts with nothing held', () => {
    expect(new MemoryLedger().held).toBe(0);
  });
});
