/**
 * The `deactivated_at` member of a key entry: when a key stopped signing (RFC 3339, UTC).
 * A key that has one only verifies, whatever else it carries; it travels with the private
 * export (how cluster workers receive keys) and never with the public one.
 */
import { describe, expect, it } from 'vitest';
import { exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';

async function entry(alg: 'ES256' | 'HS256', kid: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const [jwk] = exportKeys(await generateKeys({ algorithms: [alg] }), { includePrivate: true }).keys;
  return { ...jwk, kid, ...extra };
}

describe('deactivated_at', () => {
  it('makes a key verify-only, even one listed first with its private part', async () => {
    const keys = importKeys({
      keys: [
        await entry('ES256', 'old', { deactivated_at: '2026-11-23T10:15:00Z' }),
        await entry('ES256', 'new'),
        await entry('HS256', 'mac', { deactivated_at: '2026-11-23T10:15:00.5Z' }),
      ],
    });
    expect(keys.activeEntry('ES256')?.kid).toBe('new');
    expect(keys.signingAlgorithms).toEqual(['ES256']);
    expect(keys.keys.find((key) => key.kid === 'old')).toMatchObject({
      active: false,
      canSign: false,
      deactivatedAt: Date.parse('2026-11-23T10:15:00Z') / 1000,
    });
    expect(keys.keys.find((key) => key.kid === 'new')?.deactivatedAt).toBeUndefined();
  });

  it.each([['2026-11-23 10:15:00'], ['2026-11-23T10:15:00+01:00'], ['yesterday'], [1_763_892_900], ['2026-13-45T99:00:00Z']])(
    'refuses %j, naming the key by its place, not its value',
    async (value) => {
      const keys = { keys: [await entry('ES256', 'signer'), await entry('ES256', 'odd', { deactivated_at: value })] };
      expect(() => importKeys(keys)).toThrow(/^keys\[1\]\.deactivated_at: must be an RFC 3339 UTC time/);
      expect(() => importKeys(keys)).not.toThrow(String(value));
    },
  );

  it('travels with the private export and round-trips; the public export never has it', async () => {
    const keys = importKeys({
      keys: [
        await entry('ES256', 'new'),
        await entry('ES256', 'old', { deactivated_at: '2026-11-23T10:15:00Z' }),
        await entry('HS256', 'mac'),
      ],
    });
    const full = exportKeys(keys, { includePrivate: true });
    expect(full.keys.find((key) => key.kid === 'old')?.deactivated_at).toBe('2026-11-23T10:15:00.000Z');
    expect(importKeys(full).keys).toEqual(keys.keys);
    for (const key of exportKeys(keys).keys) expect(key.deactivated_at).toBeUndefined();
  });
});
