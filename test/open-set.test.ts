/**
 * OpenSet (src/base/open-set.ts): what a drain waits for. `closed` resolves at once when nothing
 * is open, else when the last one closes, for every caller that asked; a delete of
 * something never added settles nothing.
 */
import { describe, expect, it } from 'vitest';
import { OpenSet } from '../src/base/open-set.js';

/** Whether `promise` has settled by the next turn. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('OpenSet', () => {
  it('resolves closed at once when nothing is open', async () => {
    expect(await settled(new OpenSet<string>().closed())).toBe(true);
  });

  it('resolves every closed asked for when the last item closes, not before', async () => {
    const open = new OpenSet<string>();
    open.add('a');
    open.add('b');
    const [first, second] = [open.closed(), open.closed()];
    open.delete('a');
    open.delete('never added');
    expect(await settled(first)).toBe(false);
    expect([...open]).toEqual(['b']);
    open.delete('b');
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(true);
    expect(open.size).toBe(0);
  });

  it('waits again for what opens after a drain', async () => {
    const open = new OpenSet<number>();
    open.add(1);
    open.delete(1);
    open.add(2);
    const again = open.closed();
    expect(await settled(again)).toBe(false);
    open.delete(2);
    expect(await settled(again)).toBe(true);
  });
});
