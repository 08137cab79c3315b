/**
 * The option kinds read by both the library (values in code) and the CLI (text): each
 * accepts the same values both ways and names the option it refuses. `choice` has no row
 * yet; it is here for the enumerated options to come (a transport, a log format).
 */
import { describe, expect, it } from 'vitest';
import { cacheSize, choice, flag, integer, workerCount } from '../../src/options/kinds.js';

const refusal = (field: string) => expect.objectContaining({ code: 'ERR_INVALID_OPTION', field });

describe('integer', () => {
  const seconds = integer(1, 300);

  it('takes integers in range, from code and from text', () => {
    expect(seconds.check(300, 'x')).toBe(300);
    expect(seconds.parse(' 42 ', '--x')).toBe(42);
  });

  it.each([0, 301, 1.5, Number.NaN, '5', null])('refuses %j in code', (value) => {
    expect(() => seconds.check(value, 'x')).toThrow(refusal('x'));
  });

  it.each(['0', '301', '1.5', '-1', '1e2', '', 'five'])('refuses %j as text', (text) => {
    expect(() => seconds.parse(text, '--x')).toThrow(refusal('--x'));
  });
});

describe('flag', () => {
  it.each([
    ['1', true],
    ['TRUE', true],
    ['yes', true],
    ['0', false],
    ['false', false],
    ['No', false],
    ['', false],
  ])('reads %j as %s', (text, value) => {
    expect(flag.parse(text, '--f')).toBe(value);
  });

  it('refuses anything else, in text and in code', () => {
    expect(() => flag.parse('maybe', '--f')).toThrow(refusal('--f'));
    expect(() => flag.check('true', 'f')).toThrow(refusal('f'));
  });
});

describe('choice', () => {
  const transport = choice(['http2', 'grpc-js']);

  it('takes one of its values, from code and from text', () => {
    expect(transport.check('grpc-js', 'transport')).toBe('grpc-js');
    expect(transport.parse('http2', '--transport')).toBe('http2');
    expect(transport.range).toBe('http2, grpc-js');
  });

  it('refuses others, listing the values', () => {
    expect(() => transport.parse('HTTP2', '--transport')).toThrow(/--transport: must be one of http2, grpc-js, got "HTTP2"/);
    expect(() => transport.check(undefined, 'transport')).toThrow(refusal('transport'));
  });
});

describe('cacheSize', () => {
  const cache = cacheSize(100);

  it('resolves { maxEntries }, false and 0 to a number of entries, 0 being off', () => {
    expect(cache.check({ maxEntries: 100 }, 'c')).toBe(100);
    expect(cache.check({ maxEntries: 0 }, 'c')).toBe(0);
    expect(cache.check(false, 'c')).toBe(0);
    expect(cache.parse('0', '--c')).toEqual({ maxEntries: 0 });
  });

  it('names maxEntries when it is the part at fault', () => {
    expect(() => cache.check({ maxEntries: 101 }, 'c')).toThrow(refusal('c.maxEntries'));
    expect(() => cache.check(true, 'c')).toThrow(refusal('c'));
    expect(() => cache.parse('101', '--c')).toThrow(refusal('--c'));
  });
});

describe('workerCount', () => {
  it('reads "max" as the available cores, and refuses counts out of range naming "max" too', () => {
    const workers = workerCount(8);
    expect(workers.parse('max', 'W')).toBeGreaterThanOrEqual(1);
    expect(() => workers.parse('9', 'W')).toThrow(/must be an integer from 1 to 8 or "max", got "9"/);
  });
});
