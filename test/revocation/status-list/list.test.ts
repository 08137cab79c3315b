/**
 * The 1-bit Token Status List this server signs: bits set once, a version that moves only on
 * a change, the encoding cached until then, and sizes and indexes outside it refused.
 */
import { describe, expect, it } from 'vitest';
import { decodeLst, statusAt } from '../../../src/revocation/status-list/codec.js';
import { STATUS_INVALID, STATUS_VALID, StatusList } from '../../../src/revocation/status-list/list.js';

describe('StatusList', () => {
  it('sets a bit once: true the first time, false after, and the version moves only then', () => {
    const list = new StatusList(64);
    expect(list.version).toBe(0);
    expect(list.set(9)).toBe(true);
    expect(list.version).toBe(1);
    expect(list.set(9)).toBe(false);
    expect(list.version).toBe(1);
    expect([list.isSet(9), list.isSet(8), list.isSet(10)]).toEqual([true, false, false]);
  });

  it('encodes once per change, as a 1-bit list whose bytes hold the bits set', () => {
    const list = new StatusList(64);
    const empty = list.json();
    expect(list.json()).toBe(empty);
    list.set(0);
    list.set(63);
    const once = list.json();
    expect(once).not.toBe(empty);
    expect(list.json()).toBe(once);
    expect(once.bits).toBe(1);
    const bytes = decodeLst(once.lst, 8);
    expect(bytes).toHaveLength(8);
    expect([statusAt(bytes, 1, 0), statusAt(bytes, 1, 1), statusAt(bytes, 1, 63)]).toEqual([STATUS_INVALID, STATUS_VALID, STATUS_INVALID]);
  });

  it('refuses an index outside the list, naming it and the range', () => {
    const list = new StatusList(64);
    for (const idx of [64, -1, 1.5, Number.NaN]) {
      expect(() => list.set(idx), String(idx)).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT', message: `status list index ${idx} is outside 0..63` }),
      );
    }
    expect(list.version).toBe(0);
    expect(list.isSet(64)).toBe(false);
  });

  it('refuses a size that is not a positive multiple of 8', () => {
    for (const size of [0, -8, 12, 8.5]) {
      expect(() => new StatusList(size), String(size)).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_ARGUMENT',
          message: `status list size must be a positive multiple of 8, got ${size}`,
        }),
      );
    }
  });
});
