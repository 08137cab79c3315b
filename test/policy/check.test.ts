/**
 * The policy document (src/policy/document.ts), read against its shipped JSON Schema
 * (src/policy/schema.ts) by src/policy/json-schema.ts: fifty documents, each with the verdict
 * JSON Schema draft 2020-12 gives it under that schema, worked out by hand from the schema's
 * keywords (null: valid; else the JSON path of the first rule broken and the message). The
 * checker must reach the same verdict on every one, with an ERR_INVALID_OPTION that names
 * the source and the path.
 */
import { describe, expect, it } from 'vitest';
import { policyKind } from '../../src/options/kinds.js';
import { checkPolicy } from '../../src/policy/document.js';
import { readJson } from '../../src/policy/json-schema.js';

const ORDERS = 'spiffe://example.org/ns/shop/sa/orders';
const caller = (fields: object) => ({ callers: { a: { subjects: ['x'], ...fields } } });
const RATE_FIELDS = '(expected one of perSecond, burst)';
const CALLER_FIELDS = '(expected one of subjects, audiences, algorithms, maxTtlSeconds, claims, bind, rate)';

/** [document, path of the first rule it breaks (null: valid), message]. */
const DOCUMENTS: readonly (readonly [unknown, string | null, string?])[] = [
  // Valid: every field at its bounds, and the optional ones left out.
  [{ callers: {} }, null],
  [{ $schema: './policy.schema.json', callers: {} }, null],
  [
    {
      callers: {
        [ORDERS]: { subjects: ['orders', 'user:*'], audiences: ['*'], algorithms: ['ES256'], maxTtlSeconds: 60, claims: [], bind: true },
        'dns:billing': { subjects: ['billing'], rate: { perSecond: 200, burst: 400 } },
      },
      revokers: [ORDERS],
      defaultRate: { perSecond: 0.5, burst: 10 },
    },
    null,
  ],
  [{ callers: { a: { subjects: ['*'] } } }, null],
  [caller({ audiences: ['a', 'b*'] }), null],
  [caller({ algorithms: ['ES256', 'HS256'] }), null],
  [caller({ claims: ['tenant', 'role'] }), null],
  [caller({ maxTtlSeconds: 1 }), null],
  [caller({ bind: false }), null],
  [caller({ rate: { perSecond: 1_000_000, burst: 1_000_000 } }), null],
  [caller({ rate: { perSecond: 0.001, burst: 1 } }), null],
  [{ callers: {}, revokers: [] }, null],
  [{ callers: {}, revokers: ['a', 'b'] }, null],
  [{ callers: { 'dns:é x': { subjects: ['ü'] } } }, null],
  [{ callers: {}, defaultRate: { perSecond: 3, burst: 3 } }, null],
  // Refused: the document itself.
  [[], '$', 'must be an object'],
  [null, '$', 'must be an object'],
  ['{"callers":{}}', '$', 'must be an object'],
  [{}, '$.callers', 'is required'],
  [{ callers: [] }, '$.callers', 'must be an object'],
  [{ callers: null }, '$.callers', 'must be an object'],
  [
    { callers: {}, revoker: [] },
    '$.revoker',
    'is not a field (expected one of $schema, callers, revokers, defaultRate, exchange); did you mean $.revokers?',
  ],
  [
    { callers: {}, exchanges: [] },
    '$.exchanges',
    'is not a field (expected one of $schema, callers, revokers, defaultRate, exchange); did you mean $.exchange?',
  ],
  [{ $schema: 5, callers: {} }, '$.$schema', 'must be a string'],
  // A caller.
  [{ callers: { '': { subjects: ['a'] } } }, '$.callers[""]', 'a caller id may not be empty'],
  [{ callers: { a: 'x' } }, '$.callers.a', 'must be an object'],
  [{ callers: { [ORDERS]: {} } }, `$.callers["${ORDERS}"].subjects`, 'is required'],
  [caller({ audience: ['y'] }), '$.callers.a.audience', `is not a field ${CALLER_FIELDS}; did you mean $.callers.a.audiences?`],
  // Read as every option is: an inherited or non-enumerable field counts, as a reader of it would see it.
  [
    { callers: { a: Object.create({ subjects: ['x'], audience: ['y'] }) } },
    '$.callers.a.audience',
    `is not a field ${CALLER_FIELDS}; did you mean $.callers.a.audiences?`,
  ],
  [
    Object.defineProperty({ callers: {} }, 'revoker', { value: [] }),
    '$.revoker',
    'is not a field (expected one of $schema, callers, revokers, defaultRate, exchange); did you mean $.revokers?',
  ],
  [{ callers: { a: { subjects: [] } } }, '$.callers.a.subjects', 'must hold at least 1 entry'],
  [{ callers: { a: { subjects: 'x' } } }, '$.callers.a.subjects', 'must be an array of strings'],
  [{ callers: { a: { subjects: ['x', ''] } } }, '$.callers.a.subjects[1]', 'must be a non-empty string'],
  [{ callers: { a: { subjects: [7] } } }, '$.callers.a.subjects[0]', 'must be a non-empty string'],
  [{ callers: { a: { subjects: ['*user'] } } }, '$.callers.a.subjects[0]', '"*user": "*" may only end a pattern'],
  [caller({ audiences: ['a*b'] }), '$.callers.a.audiences[0]', '"a*b": "*" may only end a pattern'],
  [caller({ audiences: [] }), '$.callers.a.audiences', 'must hold at least 1 entry'],
  [caller({ algorithms: [] }), '$.callers.a.algorithms', 'must hold at least 1 entry'],
  [caller({ claims: [''] }), '$.callers.a.claims[0]', 'must be a non-empty string'],
  [caller({ maxTtlSeconds: 0 }), '$.callers.a.maxTtlSeconds', 'must be an integer of at least 1, got 0'],
  [caller({ maxTtlSeconds: 1.5 }), '$.callers.a.maxTtlSeconds', 'must be an integer of at least 1, got 1.5'],
  [caller({ maxTtlSeconds: '60' }), '$.callers.a.maxTtlSeconds', 'must be an integer of at least 1, got "60"'],
  [caller({ bind: 'yes' }), '$.callers.a.bind', 'must be true or false'],
  // A rate, and the revokers.
  [caller({ rate: 5 }), '$.callers.a.rate', 'must be an object'],
  [caller({ rate: { burst: 5 } }), '$.callers.a.rate.perSecond', 'is required'],
  [
    caller({ rate: { perSecond: 5, bursts: 5 } }),
    '$.callers.a.rate.bursts',
    `is not a field ${RATE_FIELDS}; did you mean $.callers.a.rate.burst?`,
  ],
  [caller({ rate: { perSecond: 0, burst: 5 } }), '$.callers.a.rate.perSecond', 'must be a number above 0, at most 1000000, got 0'],
  [{ callers: {}, defaultRate: { perSecond: 5, burst: 0.5 } }, '$.defaultRate.burst', 'must be an integer from 1 to 1000000, got 0.5'],
  [
    { callers: {}, defaultRate: { perSecond: 5, burst: 2_000_000 } },
    '$.defaultRate.burst',
    'must be an integer from 1 to 1000000, got 2000000',
  ],
  [{ callers: {}, revokers: ['a', 'b', 'a'] }, '$.revokers[2]', '"a" is listed before, at $.revokers[0]'],
];

/** The policy a valid document reads as: its fields as given, `$schema` left out. */
function withoutSchema(document: unknown): unknown {
  const { $schema: _, ...policy } = document as Record<string, unknown>;
  return policy;
}

describe('checkPolicy against the shipped JSON Schema', () => {
  it('has fifty documents, valid and refused', () => {
    expect(DOCUMENTS.length).toBe(50);
    expect(DOCUMENTS.filter(([, path]) => path === null).length).toBe(15);
  });

  it.each(DOCUMENTS.map(([document, path, message], index) => [index, document, path, message] as const))(
    'document %i: %j -> %s',
    (_index, document, path, message) => {
      if (path === null) {
        expect(checkPolicy(document, 'policy file p.json')).toEqual(withoutSchema(document));
        return;
      }
      expect(() => checkPolicy(document, 'policy file p.json')).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'policy', message: `policy file p.json: ${path}: ${message}` }),
      );
    },
  );

  it('does not let a caller named __proto__ reach the prototype', () => {
    const policy = checkPolicy(JSON.parse('{"callers": {"__proto__": {"subjects": ["x"]}}}'));
    expect(Object.keys(policy.callers)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['subjects']).toBeUndefined();
  });

  it('names the option by default, and as the option table labels it', () => {
    expect(() => checkPolicy({})).toThrow('option policy: $.callers: is required');
    expect(() => policyKind.check({}, '--policy')).toThrow('option --policy: $.callers: is required');
  });
});

describe('readJson', () => {
  it('refuses a schema keyword it does not read as its own bug, rather than skip the rule', () => {
    const internal = expect.objectContaining({ code: 'ERR_INTERNAL' });
    expect(() => readJson({ type: 'string', maxLength: 3 } as never, 'abcd')).toThrow(internal);
    expect(() => readJson({ type: 'object', properties: { a: { type: 'string', format: 'email' } } } as never, { a: 'x' })).toThrow(
      internal,
    );
    expect(() => readJson({ $ref: '#/$defs/missing' }, 'x')).toThrow(internal);
    expect(() => readJson({ minLength: 1 }, 'x')).toThrow(internal);
  });
});
