/**
 * The service's options, resolved once at start: the lifetime default yields to a lower
 * maxTtlSeconds but a given one may not exceed it; subjects are bounded by maxSubjectLength;
 * errors name the option as the label gives it (the CLI passes its flags). Each option's own
 * range is the options table's, tested in test/options.
 */
import { describe, expect, it } from 'vitest';
import { checkServiceKeys, resolveServiceOptions } from '../../src/jwt-service/options.js';
import { generateKeys } from '../../src/lib/index.js';

const quiet = { info() {}, warn() {}, error() {} };

describe('resolveServiceOptions', () => {
  it('fills the defaults: no subjects, a 2 h lifetime, a stderr logger', () => {
    const resolved = resolveServiceOptions({});
    expect(resolved).toMatchObject({ subjects: [], defaultTtlSeconds: 7200, maxTtlSeconds: 86_400, jti: true, verifyIssued: false });
    expect(typeof resolved.logger.warn).toBe('function');
  });

  it('lowers the default lifetime to a lower maxTtlSeconds', () => {
    expect(resolveServiceOptions({ maxTtlSeconds: 600, logger: quiet }).defaultTtlSeconds).toBe(600);
  });

  it('refuses a given lifetime above maxTtlSeconds, naming both', () => {
    expect(() => resolveServiceOptions({ maxTtlSeconds: 600, defaultTtlSeconds: 601 })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'defaultTtlSeconds',
        message: 'option defaultTtlSeconds: must be at most maxTtlSeconds (600), got 601',
      }),
    );
  });

  it('refuses a subject longer than maxSubjectLength, naming its entry, with the label given', () => {
    const flag = (name: string): string => `--${name}`;
    expect(() => resolveServiceOptions({ subjects: ['ok', 'toolong'], maxSubjectLength: 3 }, { label: flag })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: '--subjects',
        message: 'option --subjects: entry 1 is longer than --maxSubjectLength (3 characters)',
      }),
    );
  });

  it('refuses options that are not an object', () => {
    expect(() => resolveServiceOptions(null as never)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: 'option options: must be an object' }),
    );
  });
});

describe('checkServiceKeys', () => {
  it('takes a KeySet and refuses anything else, naming keys', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    expect(checkServiceKeys(keys)).toBe(keys);
    expect(() => checkServiceKeys({ keys: [] })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'keys' }));
  });
});
