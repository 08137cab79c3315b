/** The "did you mean" of every refusal (src/base/nearest-name.ts): Damerau-Levenshtein over names folded for case, _ and -. */
import { describe, expect, it } from 'vitest';
import { editDistance, nearestName } from '../src/base/nearest-name.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
    ['audience', 'audiance', 1],
    ['port', 'prot', 1],
    ['ca', 'abc', 3],
  ])('%j to %j: %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('nearestName', () => {
  const known = ['maxConnections', 'handshakeTimeoutMs', 'port', 'host'];

  it('finds a misspelling, a transposition, or another case and separator', () => {
    expect(nearestName('maxConections', known)).toBe('maxConnections');
    expect(nearestName('prot', known)).toBe('port');
    expect(nearestName('max_connections', known)).toBe('maxConnections');
    expect(nearestName('HANDSHAKE-TIMEOUT-MS', known)).toBe('handshakeTimeoutMs');
  });

  it('suggests nothing too far away: at most a third of the name, at least one edit', () => {
    expect(nearestName('tls', known)).toBeUndefined();
    expect(nearestName('hosts', known)).toBe('host');
    expect(nearestName('xy', ['ab'])).toBeUndefined();
    expect(nearestName('porxyz', ['port']), '3 edits in 6 letters').toBeUndefined();
    expect(nearestName('portxyz', ['port']), '3 edits in 7 letters').toBeUndefined();
    expect(nearestName('portxy', ['port']), '2 edits in 6 letters').toBe('port');
    expect(nearestName('anything', [])).toBeUndefined();
  });
});
