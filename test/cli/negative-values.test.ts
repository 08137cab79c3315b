/** A negative number after a string flag is its value (src/cli/negative-values.ts), so the flag's own check refuses it by name. */
import { describe, expect, it } from 'vitest';
import { joinNegativeValues } from '../../src/cli/negative-values.js';

const FLAGS = { port: { type: 'string' }, tls: { type: 'boolean' } } as const;

describe('joinNegativeValues', () => {
  it.each([
    [['--port', '-1'], ['--port=-1']],
    [
      ['--port', '-1.5', '--tls'],
      ['--port=-1.5', '--tls'],
    ],
    [
      ['--tls', '-1'],
      ['--tls', '-1'],
    ],
    [
      ['--port', '-x'],
      ['--port', '-x'],
    ],
    [['--port=-1'], ['--port=-1']],
    [
      ['--other', '-1'],
      ['--other', '-1'],
    ],
    [['--port'], ['--port']],
    [
      ['-1', '--port', '2'],
      ['-1', '--port', '2'],
    ],
  ])('%j -> %j', (args, joined) => {
    expect(joinNegativeValues(args, FLAGS)).toEqual(joined);
  });
});
