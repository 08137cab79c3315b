/** Where a key or subjects file stops being JSON (src/keys/json-position.ts): a line and column, never the text. */
import { describe, expect, it } from 'vitest';
import { jsonErrorPosition } from '../../src/keys/json-position.js';

describe('jsonErrorPosition', () => {
  it.each([
    ['{"keys": [1,, 2]}', 'line 1 column 13'],
    ['{\n  "keys": [\n    {"k": "secret"} x\n  ]\n}', 'line 3 column 21'],
    ['{"a": 1}}', 'line 1 column 9'],
    ["{'a': 1}", 'line 1 column 2'],
  ])('%j: %s', (text, expected) => {
    expect(jsonErrorPosition(text)).toBe(expected);
  });

  it('says a truncated text ends early, and where', () => {
    expect(jsonErrorPosition('{"keys": [\n  {"kid": "a"')).toBe('it ends early, at line 2 column 14');
    expect(jsonErrorPosition('')).toBe('it ends early, at line 1 column 1');
  });

  it('never quotes the text', () => {
    const secret = 'c2VjcmV0LXRoYXQtbXVzdC1ub3QtbGVhaw';
    expect(jsonErrorPosition(`{"k": "${secret}" oops}`)).not.toContain(secret.slice(0, 6));
  });
});
