/**
 * NODEMAXPROCS, the environment's default worker count: unset or blank is the option's
 * default, "max" one per core, and anything else refused naming the variable.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseNodeMaxProcs } from '../../src/cluster/max-procs.js';

describe('parseNodeMaxProcs', () => {
  it('gives the default of 1 when unset or blank', () => {
    expect(parseNodeMaxProcs(undefined)).toBe(1);
    expect(parseNodeMaxProcs('')).toBe(1);
    expect(parseNodeMaxProcs('  ')).toBe(1);
  });

  it('reads a count, and "max" as one per core', () => {
    expect(parseNodeMaxProcs('4')).toBe(4);
    expect(parseNodeMaxProcs('1024')).toBe(1024);
    expect(parseNodeMaxProcs(' max ')).toBe(availableParallelism());
  });

  it('refuses anything else with ERR_INVALID_OPTION naming NODEMAXPROCS and the value', () => {
    for (const value of ['0', '1025', 'two', '1.5', '-1']) {
      expect(() => parseNodeMaxProcs(value), value).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_OPTION',
          field: 'NODEMAXPROCS',
          message: `option NODEMAXPROCS: must be an integer from 1 to 1024 or "max", got ${JSON.stringify(value)}`,
        }),
      );
    }
  });
});
