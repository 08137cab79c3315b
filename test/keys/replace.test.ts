/** Whether new keys can take over (src/keys/replace.ts): no algorithm signed now may stop being signed. */
import { describe, expect, it } from 'vitest';
import { checkKeyReplacement } from '../../src/keys/replace.js';
import { exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';

describe('checkKeyReplacement', () => {
  it('accepts keys that sign every algorithm signed now, and more', async () => {
    const current = await generateKeys({ algorithms: ['HS256'] });
    expect(() => checkKeyReplacement(current, current)).not.toThrow();
    expect(() => checkKeyReplacement(current, importKeys(exportKeys(current, { includePrivate: true })))).not.toThrow();
  });

  it('refuses keys that would lose a signing algorithm, naming each one lost', async () => {
    const current = await generateKeys({ algorithms: ['HS256', 'HS384', 'HS512'] });
    const next = await generateKeys({ algorithms: ['HS384'] });
    expect(() => checkKeyReplacement(current, next)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_KEY',
        field: 'keys',
        message: expect.stringMatching(/^no key could sign HS256, HS512 any more/),
      }),
    );
  });

  it('refuses keys that only verify an algorithm signed now', async () => {
    const current = await generateKeys({ algorithms: ['HS256'] });
    const [jwk] = exportKeys(current, { includePrivate: true }).keys as Record<string, unknown>[];
    const verifyOnly = importKeys({ keys: [{ ...jwk, key_ops: ['verify'] }] });
    expect(() => checkKeyReplacement(current, verifyOnly)).toThrow(/no key could sign HS256/);
  });
});
