/**
 * The one codec of a revocation record: what the file store writes as a line and Redis as
 * a value and a message, and the one reader both use, which refuses a bad field by name.
 */
import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, isRecordProblem, readRecord, unavailable } from '../../src/revocation/record-codec.js';
import { decodeMessage, decodeValue, encodeMessage, encodeValue } from '../../src/revocation/redis-codec.js';
import type { Revocation } from '../../src/contracts/revocation-store.js';
import { JwtGrpcError } from '../../src/base/errors.js';

const FULL: Revocation = { jti: 'mB3jv0pQ7xX9cJqYg1a2Rw', expiresAt: 1795606973, reason: 'laptop stolen', statusIndex: 7 };
const BARE: Revocation = { jti: 'a1', expiresAt: 1795606973 };

describe('encodeRecord and decodeRecord', () => {
  it.each([FULL, BARE, { ...BARE, statusIndex: 0 }, { ...BARE, reason: '' }])('round-trips %j, with and without its jti', (revocation) => {
    expect(decodeRecord(encodeRecord(revocation))).toEqual(revocation);
    expect(decodeRecord(encodeRecord(revocation, false), revocation.jti)).toEqual(revocation);
  });

  it('writes the fields in one order and leaves out the absent ones', () => {
    expect(encodeRecord(FULL)).toBe('{"jti":"mB3jv0pQ7xX9cJqYg1a2Rw","expiresAt":1795606973,"reason":"laptop stolen","statusIndex":7}');
    expect(encodeRecord(BARE)).toBe('{"jti":"a1","expiresAt":1795606973}');
    expect(encodeRecord(FULL, false)).toBe('{"expiresAt":1795606973,"reason":"laptop stolen","statusIndex":7}');
  });

  it('is what both stores write: a file line is the Redis message, a Redis value the record without its jti', () => {
    expect(encodeMessage(FULL)).toBe(encodeRecord(FULL));
    expect(encodeValue(FULL)).toBe(encodeRecord(FULL, false));
  });
});

describe('readRecord refuses each field by name', () => {
  it.each([
    ['record', 'not an object', 'x', 5],
    ['record', 'an array', 'x', []],
    ['record', 'null', 'x', null],
    ['jti', 'absent', undefined, { expiresAt: 1 }],
    ['jti', 'empty', '', { expiresAt: 1 }],
    ['jti', 'a number', 12, { expiresAt: 1 }],
    ['expiresAt', 'absent', 'x', {}],
    ['expiresAt', 'text', 'x', { expiresAt: '1795606973' }],
    ['expiresAt', 'not finite', 'x', { expiresAt: Number.POSITIVE_INFINITY }],
    ['reason', 'a number', 'x', { expiresAt: 1, reason: 3 }],
    ['statusIndex', 'negative', 'x', { expiresAt: 1, statusIndex: -1 }],
    ['statusIndex', 'fractional', 'x', { expiresAt: 1, statusIndex: 1.5 }],
    ['statusIndex', 'past 2^53', 'x', { expiresAt: 1, statusIndex: 2 ** 53 }],
    ['statusIndex', 'text', 'x', { expiresAt: 1, statusIndex: '7' }],
  ])('%s: %s', (field, _what, jti, fields) => {
    const read = readRecord(jti, fields);
    expect(isRecordProblem(read)).toBe(true);
    expect(read).toMatchObject({ field, problem: expect.stringMatching(/^must be .*, got /) });
  });

  it('refuses text that is no JSON as the record', () => {
    expect(decodeRecord('{"jti":"a1","expi')).toEqual({ field: 'record', problem: 'is not JSON' });
  });
});

describe('the Redis readers use it', () => {
  it('refuse a negative statusIndex in a value and in a message, as the file store does', () => {
    expect(decodeValue('a1', '{"expiresAt":1795606973,"statusIndex":-1}')).toBeUndefined();
    expect(decodeMessage('3 {"jti":"a1","expiresAt":1795606973,"statusIndex":-1}')).toBeUndefined();
    expect(decodeMessage(`3 ${encodeMessage(FULL)}`)).toEqual({ version: 3, revocation: FULL });
    expect(decodeValue(FULL.jti, encodeValue(FULL))).toEqual(FULL);
  });
});

describe('unavailable', () => {
  it('is ERR_REVOCATION_STORE_UNAVAILABLE naming the option that chose the store, its cause kept', () => {
    const cause = new Error('EIO');
    const err = unavailable('revocationStore', 'Redis did not store the revocation', cause);
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect(err).toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE', field: 'revocationStore', cause });
    expect(unavailable('revocations', 'not open').field).toBe('revocations');
  });
});
