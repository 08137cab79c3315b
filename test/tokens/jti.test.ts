/** Token ids (src/tokens/jti.ts): 128 random bits as 22 base64url characters, never repeated across pool refills. */
import { describe, expect, it } from 'vitest';
import { newJti } from '../../src/tokens/jti.js';

describe('newJti', () => {
  it('gives 16 random bytes as base64url, all different over several refills of the pool', () => {
    const ids = Array.from({ length: 2000 }, () => newJti());
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
