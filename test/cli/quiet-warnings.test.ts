/** The one warning the CLI client silences (src/cli/quiet-warnings.ts): DEP0123, TLS SNI to an IP address; every other warning passes. */
import { afterEach, describe, expect, it } from 'vitest';
import { quietIpServerNameWarning } from '../../src/cli/quiet-warnings.js';

const original = process.emitWarning;
afterEach(() => {
  process.emitWarning = original;
});

describe('quietIpServerNameWarning', () => {
  it('drops DEP0123 however it is emitted, and passes the others as they were', () => {
    const passed: unknown[][] = [];
    process.emitWarning = ((...args: unknown[]) => void passed.push(args)) as typeof process.emitWarning;
    quietIpServerNameWarning();
    process.emitWarning('Setting the TLS ServerName to an IP address is not permitted', 'DeprecationWarning', 'DEP0123');
    process.emitWarning('Setting the TLS ServerName to an IP address is not permitted', { type: 'DeprecationWarning', code: 'DEP0123' });
    process.emitWarning('something else', 'DeprecationWarning', 'DEP0005');
    process.emitWarning('plain');
    process.emitWarning('with options', { code: 'X1' });
    expect(passed).toEqual([['something else', 'DeprecationWarning', 'DEP0005'], ['plain'], ['with options', { code: 'X1' }]]);
  });
});
