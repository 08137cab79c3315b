/**
 * OwnedResources, the stack a server's parts own what they open with (AsyncDisposableStack's
 * shape, for Node 22), and releaseOnce.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { OwnedResources, releaseOnce } from '../../src/server/owned-resources.js';

describe('OwnedResources', () => {
  it('releases last owned first: use (async and sync disposables), adopt and defer alike; null and undefined are skipped', async () => {
    const order: string[] = [];
    const owned = new OwnedResources();
    owned.defer(() => order.push('deferred'));
    const adopted = owned.adopt({ name: 'adopted' }, (value) => order.push(value.name));
    owned.use({ [Symbol.dispose]: () => order.push('sync') });
    owned.use({ [Symbol.asyncDispose]: async () => void order.push('async') });
    expect(owned.use(null)).toBeNull();
    expect(owned.use(undefined)).toBeUndefined();
    expect(adopted.name).toBe('adopted');
    expect(owned.disposed).toBe(false);
    await owned.disposeAsync();
    expect(order).toEqual(['async', 'sync', 'adopted', 'deferred']);
    expect(owned.disposed).toBe(true);
  });

  it('waits for each release before the next one', async () => {
    const order: string[] = [];
    const owned = new OwnedResources();
    owned.defer(() => order.push('first owned'));
    owned.defer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('last owned, slow');
    });
    await owned.disposeAsync();
    expect(order).toEqual(['last owned, slow', 'first owned']);
  });

  it('runs every release when some fail: one error is rethrown as is, several as an AggregateError', async () => {
    const one = new OwnedResources();
    const ran: number[] = [];
    const failure = new Error('one');
    one.defer(() => ran.push(1));
    one.defer(() => {
      throw failure;
    });
    await expect(one.disposeAsync()).rejects.toBe(failure);
    expect(ran).toEqual([1]);

    const several = new OwnedResources();
    several.defer(() => Promise.reject(new Error('a')));
    several.defer(() => ran.push(2));
    several.defer(() => Promise.reject(new Error('b')));
    const err = await several.disposeAsync().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(['b', 'a']);
    expect(ran).toEqual([1, 2]);
  });

  it('disposes once: a later disposeAsync returns the same promise, and the releases run once', async () => {
    let runs = 0;
    const owned = new OwnedResources();
    owned.defer(() => (runs += 1));
    const first = owned.disposeAsync();
    expect(owned.disposeAsync()).toBe(first);
    await owned[Symbol.asyncDispose]();
    expect(runs).toBe(1);
  });

  it('refuses to own anything once released (it would never be released), and a use() of what cannot be disposed', async () => {
    const owned = new OwnedResources();
    expect(() => owned.use({} as Disposable)).toThrow(JwtGrpcError);
    await owned.disposeAsync();
    expect(() => owned.defer(() => undefined)).toThrow(/already released/);
    expect(() => owned.adopt(1, () => undefined)).toThrow(JwtGrpcError);
  });
});

describe('releaseOnce', () => {
  it("calls the release at once, once: later calls get the first call's promise, whatever their arguments", async () => {
    const calls: number[] = [];
    const close = releaseOnce((graceMs: number) => {
      calls.push(graceMs);
    });
    const first = close(5000);
    expect(calls).toEqual([5000]);
    expect(close(0)).toBe(first);
    await first;
    expect(calls).toEqual([5000]);
  });

  it('turns a release that throws into a rejected promise', async () => {
    const close = releaseOnce(() => {
      throw new Error('cannot');
    });
    await expect(close()).rejects.toThrow('cannot');
  });
});
