/** The algorithm names (src/algorithms/names.ts): exact JWS spellings only. */
import { describe, expect, it } from 'vitest';
import { ALGORITHMS, isAlgorithm } from '../../src/algorithms/names.js';

describe('isAlgorithm', () => {
  it('accepts every listed name and nothing else', () => {
    for (const alg of ALGORITHMS) expect(isAlgorithm(alg)).toBe(true);
    for (const value of ['es256', 'none', 'HS1', 'ES256 ', '', undefined, null, 256, ['ES256'], { alg: 'ES256' }]) {
      expect(isAlgorithm(value), String(value)).toBe(false);
    }
  });
});
