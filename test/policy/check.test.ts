/**
 * The policy's shape (src/policy/document.ts): every field checked, unknown ones refused with
 * the nearest name, each refusal an ERR_INVALID_OPTION naming the source and the JSON path.
 */
import { describe, expect, it } from 'vitest';
import { policyKind } from '../../src/options/kinds.js';
import { checkPolicy } from '../../src/policy/document.js';

const ORDERS = 'spiffe://example.org/ns/shop/sa/orders';

describe('checkPolicy', () => {
  it('returns the policy with only the fields given', () => {
    const policy = checkPolicy({
      $schema: './policy.schema.json',
      callers: {
        [ORDERS]: { subjects: ['orders', 'user:*'], audiences: ['*'], algorithms: ['ES256'], maxTtlSeconds: 60, claims: [], bind: true },
        'dns:billing': { subjects: ['billing'], rate: { perSecond: 200, burst: 400 } },
      },
      revokers: [ORDERS],
      defaultRate: { perSecond: 0.5, burst: 10 },
    });
    expect(policy).toEqual({
      callers: {
        [ORDERS]: { subjects: ['orders', 'user:*'], audiences: ['*'], algorithms: ['ES256'], maxTtlSeconds: 60, claims: [], bind: true },
        'dns:billing': { subjects: ['billing'], rate: { perSecond: 200, burst: 400 } },
      },
      revokers: [ORDERS],
      defaultRate: { perSecond: 0.5, burst: 10 },
    });
    expect(checkPolicy({ callers: {} })).toEqual({ callers: {} });
  });

  it('does not let a caller named __proto__ reach the prototype', () => {
    const policy = checkPolicy(JSON.parse('{"callers": {"__proto__": {"subjects": ["x"]}}}'));
    expect(Object.keys(policy.callers)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['subjects']).toBeUndefined();
  });

  it.each([
    [[], '$: must be an object'],
    [{}, '$.callers: is required'],
    [{ callers: [] }, '$.callers: must be an object'],
    [
      { callers: {}, revoker: [] },
      '$.revoker: is not a field (expected one of $schema, callers, revokers, defaultRate); did you mean $.revokers?',
    ],
    [{ callers: { '': { subjects: ['a'] } } }, '$.callers[""]: a caller id may not be empty'],
    [
      { callers: { a: { subjects: ['x'], audience: ['y'] } } },
      '$.callers.a.audience: is not a field (expected one of subjects, audiences, algorithms, maxTtlSeconds, claims, bind, rate); did you mean $.callers.a.audiences?',
    ],
    [{ callers: { [ORDERS]: {} } }, `$.callers["${ORDERS}"].subjects: is required`],
    [{ callers: { a: { subjects: [] } } }, '$.callers.a.subjects: must hold at least 1 entry'],
    [{ callers: { a: { subjects: 'x' } } }, '$.callers.a.subjects: must be an array of strings'],
    [{ callers: { a: { subjects: ['x', ''] } } }, '$.callers.a.subjects[1]: must be a non-empty string'],
    [{ callers: { a: { subjects: ['*user'] } } }, '$.callers.a.subjects[0]: "*user": "*" may only end a pattern'],
    [{ callers: { a: { subjects: ['x'], audiences: ['a*b'] } } }, '$.callers.a.audiences[0]: "a*b": "*" may only end a pattern'],
    [{ callers: { a: { subjects: ['x'], algorithms: [] } } }, '$.callers.a.algorithms: must hold at least 1 entry'],
    [{ callers: { a: { subjects: ['x'], maxTtlSeconds: 0 } } }, '$.callers.a.maxTtlSeconds: must be an integer of at least 1, got 0'],
    [{ callers: { a: { subjects: ['x'], maxTtlSeconds: 1.5 } } }, '$.callers.a.maxTtlSeconds: must be an integer of at least 1, got 1.5'],
    [{ callers: { a: { subjects: ['x'], bind: 'yes' } } }, '$.callers.a.bind: must be true or false'],
    [{ callers: {}, revokers: [5] }, '$.revokers[0]: must be a non-empty string'],
    // Read as every option is: an inherited or non-enumerable field counts, as checkPolicy would read it.
    [{ callers: { a: Object.create({ subjects: ['x'], audience: ['y'] }) } }, '$.callers.a.audience: is not a field'],
    [Object.defineProperty({ callers: {} }, 'revoker', { value: [] }), '$.revoker: is not a field'],
    [{ callers: { a: { subjects: ['x'], rate: 5 } } }, '$.callers.a.rate: must be an object'],
    [{ callers: { a: { subjects: ['x'], rate: { burst: 5 } } } }, '$.callers.a.rate.perSecond: is required'],
    [{ callers: { a: { subjects: ['x'], rate: { perSecond: 5 } } } }, '$.callers.a.rate.burst: is required'],
    [
      { callers: { a: { subjects: ['x'], rate: { perSecond: 5, bursts: 5 } } } },
      '$.callers.a.rate.bursts: is not a field (expected one of perSecond, burst); did you mean $.callers.a.rate.burst?',
    ],
    [
      { callers: { a: { subjects: ['x'], rate: { perSecond: 0, burst: 5 } } } },
      '$.callers.a.rate.perSecond: must be a number above 0, at most 1000000, got 0',
    ],
    [
      { callers: { a: { subjects: ['x'], rate: { perSecond: '5', burst: 5 } } } },
      '$.callers.a.rate.perSecond: must be a number above 0, at most 1000000, got "5"',
    ],
    [{ callers: {}, defaultRate: { perSecond: 5, burst: 0.5 } }, '$.defaultRate.burst: must be an integer from 1 to 1000000, got 0.5'],
    [
      { callers: {}, defaultRate: { perSecond: 5, burst: 2000000 } },
      '$.defaultRate.burst: must be an integer from 1 to 1000000, got 2000000',
    ],
  ])('refuses %j: %s', (value, problem) => {
    expect(() => checkPolicy(value, 'policy file p.json')).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'policy',
        message: expect.stringContaining(`policy file p.json: ${problem}`),
      }),
    );
  });

  it('names the option by default, and as the option table labels it', () => {
    expect(() => checkPolicy({})).toThrow('option policy: $.callers: is required');
    expect(() => policyKind.check({}, '--policy')).toThrow('option --policy: $.callers: is required');
  });
});
