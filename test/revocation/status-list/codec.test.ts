/**
 * The Token Status List codec against draft-ietf-oauth-status-list-20: the section 4.1
 * examples and the Appendix C test vectors, status values of every width read and written
 * in place, and the lst refusals (a ZLIB bomb, text that is not base64url).
 */
import { describe, expect, it } from 'vitest';
import { decodeLst, encodeLst, isStatusBits, setStatusAt, statusAt } from '../../../src/revocation/status-list/codec.js';
import { StatusList } from '../../../src/revocation/status-list/list.js';

const MAX = 1 << 20;

/** Appendix C: the indexes set in each long vector (status value per index). */
const LONG_1 = [0, 1993, 25460, 159495, 495669, 554353, 645645, 723232, 854545, 934534, 1000345];
const LONG_1_LST =
  'eNrt3AENwCAMAEGogklACtKQPg9LugC9k_ACvreiogEAAKkeCQAAAAAAAAAAAAAAAAAAAIBylgQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAXG9IAAAAAAAAAPwsJAAAAAAAAAAAAAAAvhsSAAAAAAAAAAAA7KpLAAAAAAAAAAAAAAAAAAAAAJsLCQAAAAAAAAAAADjelAAAAAAAAAAAKjDMAQAAAACAZC8L2AEb';
const LONG_2: ReadonlyArray<[number, number]> = [
  [0, 1],
  [1993, 2],
  [25460, 1],
  [159495, 3],
  [495669, 1],
  [554353, 1],
  [645645, 2],
  [723232, 1],
  [854545, 1],
  [934534, 2],
  [1000345, 3],
];
const LONG_2_LST =
  'eNrt2zENACEQAEEuoaBABP5VIO01fCjIHTMStt9ovGVIAAAAAABAbiEBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEB5WwIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAID0ugQAAAAAAAAAAAAAAAAAQG12SgAAAAAAAAAAAAAAAAAAAAAAAAAAAOCSIQEAAAAAAAAAAAAAAAAAAAAAAAD8ExIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAwJEuAQAAAAAAAAAAAAAAAAAAAAAAAMB9SwIAAAAAAAAAAAAAAAAAAACoYUoAAAAAAAAAAAAAAEBqH81gAQw';

describe('status list codec (draft 20 section 4.1, Appendix C)', () => {
  it('encodes the 1-bit example of section 4.1 byte for byte and reads it back LSB first', () => {
    expect(encodeLst(Uint8Array.of(0xb9, 0xa3))).toBe('eNrbuRgAAhcBXQ');
    const bytes = decodeLst('eNrbuRgAAhcBXQ', 16);
    const expected = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1];
    expect(expected.map((_, idx) => statusAt(bytes, 1, idx))).toEqual(expected);
    expect(statusAt(bytes, 1, 16)).toBeUndefined();
  });

  it('encodes the 2-bit example of section 4.1 and reads its values', () => {
    expect(encodeLst(Uint8Array.of(0xc9, 0x44, 0xf9))).toBe('eNo76fITAAPfAgc');
    const bytes = decodeLst('eNo76fITAAPfAgc', 3);
    expect([...Array(12).keys()].map((idx) => statusAt(bytes, 2, idx))).toEqual([1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]);
  });

  it('builds the byte array of the 1-bit test vector of Appendix C from a StatusList of 2^20 entries', () => {
    const list = new StatusList(MAX);
    for (const idx of LONG_1) list.set(idx);
    const ours = list.json();
    expect(ours.bits).toBe(1);
    const bytes = decodeLst(LONG_1_LST, MAX / 8);
    // The compressed bytes may differ (another zlib build, same level); the array may not.
    expect(decodeLst(ours.lst, MAX / 8).equals(bytes)).toBe(true);
    expect(bytes.length).toBe(MAX / 8);
    const set: number[] = [];
    for (let idx = 0; idx < MAX; idx++) if (statusAt(bytes, 1, idx) === 1) set.push(idx);
    expect(set).toEqual(LONG_1);
  });

  it('decodes the 2-bit test vector of Appendix C', () => {
    const bytes = decodeLst(LONG_2_LST, MAX / 4);
    for (const [idx, value] of LONG_2) expect(statusAt(bytes, 2, idx)).toBe(value);
    expect(statusAt(bytes, 2, 1)).toBe(0);
  });

  it('refuses an lst that inflates past the bound (a ZLIB bomb) or is not base64url', () => {
    const bomb = encodeLst(new Uint8Array(1 << 22));
    expect(() => decodeLst(bomb, MAX / 8)).toThrow(expect.objectContaining({ code: 'ERR_BUFFER_TOO_LARGE' }));
    expect(() => decodeLst('not base64url!', 16)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT', message: 'lst is not base64url' }),
    );
    expect(() => decodeLst('eNrbuRgAAhcBXQ==', 16)).toThrow('lst is not base64url');
    expect(() => decodeLst(42 as unknown as string, 16)).toThrow('lst is not base64url');
  });
});

describe('status values in place', () => {
  it('takes the four widths of the draft and nothing else', () => {
    expect([1, 2, 4, 8].every(isStatusBits)).toBe(true);
    for (const other of [0, 3, 16, '1', undefined]) expect(isStatusBits(other), String(other)).toBe(false);
  });

  it('writes a value of each width at its place, least significant bits first, leaving its neighbours', () => {
    for (const bits of [1, 2, 4, 8] as const) {
      const bytes = new Uint8Array(8).fill(0xff);
      const max = (1 << bits) - 1;
      setStatusAt(bytes, bits, 3, 0);
      expect(statusAt(bytes, bits, 3), `bits ${bits}`).toBe(0);
      expect([statusAt(bytes, bits, 2), statusAt(bytes, bits, 4)], `bits ${bits}`).toEqual([max, max]);
      setStatusAt(bytes, bits, 3, max);
      expect(
        bytes.every((b) => b === 0xff),
        `bits ${bits}`,
      ).toBe(true);
    }
    const two = new Uint8Array(1);
    setStatusAt(two, 2, 1, 3);
    expect(two[0]).toBe(0b0000_1100);
  });

  it('keeps only the bits of the width when a value is wider', () => {
    const bytes = new Uint8Array(1);
    setStatusAt(bytes, 2, 0, 0b111);
    expect(bytes[0]).toBe(0b11);
  });

  it('reads nothing at an index past the bytes, negative, or not an integer', () => {
    const bytes = new Uint8Array(1).fill(0xff);
    expect(statusAt(bytes, 1, 8)).toBeUndefined();
    expect(statusAt(bytes, 1, -1)).toBeUndefined();
    expect(statusAt(bytes, 1, 0.5)).toBeUndefined();
    expect(statusAt(bytes, 1, Number.NaN)).toBeUndefined();
  });
});
