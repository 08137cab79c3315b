/**
 * singleFlight: callers that arrive while the work runs share its one run; the next caller
 * after it settles (fulfilled or rejected) starts a new one.
 */
import { describe, expect, it } from 'vitest';
import { singleFlight } from '../../src/client/single-flight.js';

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('singleFlight', () => {
  it('shares one run among concurrent callers and says it is running until it settles', async () => {
    let runs = 0;
    const gate = deferred<number>();
    const flight = singleFlight(() => {
      runs++;
      return gate.promise;
    });
    expect(flight.running).toBe(false);
    const a = flight.run();
    const b = flight.run();
    expect(a).toBe(b);
    expect(flight.running).toBe(true);
    gate.resolve(42);
    expect(await a).toBe(42);
    expect(runs).toBe(1);
    expect(flight.running).toBe(false);
  });

  it('starts a fresh run after a rejection: a failure is not cached', async () => {
    let runs = 0;
    const flight = singleFlight(async () => {
      runs++;
      if (runs === 1) throw new Error('first fails');
      return runs;
    });
    await expect(flight.run()).rejects.toThrow('first fails');
    expect(flight.running).toBe(false);
    expect(await flight.run()).toBe(2);
  });
});
