/**
 * The round-trip rule of claims_json (src/jwt-service/claims-json.ts) case by case; the
 * refusals over a real connection are in test/server/bad-input.test.ts. Every accepted text
 * is checked against what JSON.parse then JSON.stringify makes of it.
 */
import { describe, expect, it } from 'vitest';
import { claimsJsonProblem } from '../../src/jwt-service/claims-json.js';

/** True when each number of `json` is re-serialized to a token of the same decimal value, and nothing else changed. */
function survives(json: string): boolean {
  return claimsJsonProblem(json) === undefined;
}

describe('numbers', () => {
  it.each([
    '0',
    '-1',
    '1.5',
    '1.50',
    '0.1',
    '1.1',
    '-2.5e-7',
    '1e21',
    '1E21',
    '1e+21',
    '1.5e300',
    '5e-324',
    '1.7976931348623157e308',
    '9007199254740991',
    '-9007199254740991',
    '18446744073709552000',
    '0.0',
    '0e999999999999999999',
    '100',
    '1e2',
    '123456789012345680000',
  ])('accepts %s: its re-serialization has the same value', (n) => {
    expect(claimsJsonProblem(`{"n":${n}}`)).toBeUndefined();
    // The same value: the decimal the signed token holds is the one asked for.
    expect(Number(JSON.stringify(JSON.parse(`{"n":${n}}`).n))).toBe(Number(n));
  });

  it.each([
    ['1e400', 'null'],
    ['-1e400', 'null'],
    ['1e-400', '0'],
    ['-1e-400', '0'],
    ['18446744073709551617', '18446744073709552000'],
    ['18446744073709551616', '18446744073709552000'],
    ['9007199254740993', '9007199254740992'],
    ['1.0000000000000000001', '1'],
    ['0.30000000000000000001', '0.3'],
  ])('refuses %s, which would be signed as %s', (n, signed) => {
    expect(claimsJsonProblem(`{"n":${n}}`)).toBe(`$.n: number ${n} does not survive a round trip (it would be signed as ${signed})`);
  });

  it.each(['-0', '-0.0', '-0e10', '-0.000E-5'])('refuses negative zero %s: JSON.stringify drops the sign', (n) => {
    expect(claimsJsonProblem(`{"n":${n}}`)).toBe(`$.n: number ${n} is negative zero, which would be signed as 0`);
  });

  it('elides a long number in the message', () => {
    const n = `1.${'0'.repeat(100)}1`;
    expect(claimsJsonProblem(`{"n":${n}}`)).toBe(
      `$.n: number ${n.slice(0, 40)}... does not survive a round trip (it would be signed as 1)`,
    );
  });
});

describe('keys and strings', () => {
  it('refuses a key repeated in one object, also when spelled with an escape; the same key in two objects is fine', () => {
    expect(claimsJsonProblem('{"a":1,"b":{"a":2},"a":3}')).toBe('$.a: duplicate key "a"');
    expect(claimsJsonProblem('{"x":{"k":1,"\\u006b":2}}')).toBe('$.x.k: duplicate key "k"');
    expect(survives('{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]}')).toBe(true);
  });

  it('refuses a lone surrogate, escaped or raw, in a value or a key; a pair is fine', () => {
    expect(claimsJsonProblem('{"s":"\\ud800"}')).toBe('$.s: string has a lone surrogate, which UTF-8 cannot carry');
    expect(claimsJsonProblem('{"s":["ok","x\\udc00y"]}')).toBe('$.s[1]: string has a lone surrogate, which UTF-8 cannot carry');
    expect(claimsJsonProblem('{"s":"\ud800"}')).toBe('$.s: string has a lone surrogate, which UTF-8 cannot carry');
    expect(claimsJsonProblem('{"\\ud800":1}')).toBe('$["\\ud800"]: key has a lone surrogate, which UTF-8 cannot carry');
    expect(survives('{"s":"\\ud83d\\ude00 😀 日本語 \\u00e9 \\" \\\\ \\n"}')).toBe(true);
  });

  it('names the path through arrays and odd keys', () => {
    expect(claimsJsonProblem('{"a":[0,{"odd key":[1,2,1e999]}]}')).toBe(
      '$.a[1]["odd key"][2]: number 1e999 does not survive a round trip (it would be signed as null)',
    );
    expect(claimsJsonProblem('{"":{"$x_1":-0}}')).toBe('$[""].$x_1: number -0 is negative zero, which would be signed as 0');
  });

  it('does not read numbers, commas or brackets inside strings as such', () => {
    expect(survives('{"s":"1e400, -0, ] } [ {","t":"\\"1e400\\""}')).toBe(true);
  });

  it('reads 2,000 nested arrays without recursion', () => {
    expect(claimsJsonProblem(`{"d":${'['.repeat(2000)}-0${']'.repeat(2000)}}`)).toMatch(/^\$\.d(\[0\]){2000}: number -0 is negative zero/);
  });
});
