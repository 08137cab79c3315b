/**
 * The client's two option readers: an integer within bounds (with its fallback) and an
 * optional non-empty string; every refusal is ERR_INVALID_OPTION naming the option and the value.
 */
import { describe, expect, it } from 'vitest';
import { integerOption, stringOption } from '../../src/client/options.js';

describe('integerOption', () => {
  it('takes the value, or the fallback when it is undefined, bounds included', () => {
    expect(integerOption('n', undefined, 7, 0, 10)).toBe(7);
    expect(integerOption('n', 0, 7, 0, 10)).toBe(0);
    expect(integerOption('n', 10, 7, 0, 10)).toBe(10);
  });

  it.each([
    [-1, '-1'],
    [11, '11'],
    [1.5, '1.5'],
    ['3', '"3"'],
    [Number.NaN, 'null'],
    // Not "not given": a null is refused rather than rewritten to the default.
    [null, 'null'],
  ])('refuses %s naming the option, its range and the value', (value, shown) => {
    expect(() => integerOption('retryMs', value, 7, 0, 10)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'retryMs',
        message: `option retryMs: must be an integer from 0 to 10, got ${shown}`,
      }),
    );
  });
});

describe('stringOption', () => {
  it('passes undefined through and takes a non-empty string', () => {
    expect(stringOption('issuer', undefined)).toBeUndefined();
    expect(stringOption('issuer', 'https://a')).toBe('https://a');
  });

  it.each([
    ['', '""'],
    [3, '3'],
    [null, 'null'],
  ])('refuses %j', (value, shown) => {
    expect(() => stringOption('issuer', value)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'issuer',
        message: `option issuer: must be a non-empty string, got ${shown}`,
      }),
    );
  });
});
