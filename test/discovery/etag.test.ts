/** ETags of the discovery documents (src/documents/etag.ts): strong, from the bytes; If-None-Match read as RFC 9110 §13.1.2 does. */
import { describe, expect, it } from 'vitest';
import { noneMatch, strongEtag } from '../../src/documents/etag.js';

describe('strongEtag', () => {
  it('is a quoted hash of the bytes: equal bytes, equal tags', () => {
    const tag = strongEtag(Buffer.from('{"keys":[]}'));
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(strongEtag(Buffer.from('{"keys":[]}'))).toBe(tag);
    expect(strongEtag(Buffer.from('{"keys":[1]}'))).not.toBe(tag);
  });
});

describe('noneMatch', () => {
  const etag = '"abc"';

  it.each([
    [undefined, false],
    ['"abc"', true],
    ['*', true],
    [' * ', true],
    ['"x", "abc"', true],
    ['W/"abc"', true],
    ['"abcd"', false],
    ['abc', false],
    ['"', false],
    ['"x",W/"y"', false],
    ['', false],
  ])('%j: %s', (header, matches) => {
    expect(noneMatch(header, etag)).toBe(matches);
  });
});
