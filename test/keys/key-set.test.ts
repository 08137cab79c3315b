/**
 * The key set (src/keys/key-set.ts): the first signer of each algorithm is active, kids are
 * unique (named by position, never by value), and no material reaches JSON or inspect.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KeySet, exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';

async function hsJwk(): Promise<Record<string, unknown>> {
  return exportKeys(await generateKeys({ algorithms: ['HS256'] }), { includePrivate: true }).keys[0] as Record<string, unknown>;
}

describe('KeySet', () => {
  it('makes the first signer of each algorithm active, in the order given', async () => {
    const [hs, es] = [await hsJwk(), exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }).keys[0]];
    const set = importKeys({
      keys: [
        { ...hs, kid: 'staged', key_ops: ['verify'] },
        { ...hs, kid: 'first' },
        { ...es, kid: 'es' },
        { ...hs, kid: 'second' },
      ],
    });
    expect(set.keys.map(({ kid, active, canSign }) => [kid, active, canSign])).toEqual([
      ['staged', false, false],
      ['first', true, true],
      ['es', true, true],
      ['second', false, true],
    ]);
    expect(set.signingAlgorithms).toEqual(['HS256', 'ES256']);
    expect(set.activeEntry('HS256')?.kid).toBe('first');
    expect(set.activeEntry('RS256')).toBeUndefined();
    expect(set.entry('second')?.alg).toBe('HS256');
    expect(set.entry('none')).toBeUndefined();
    expect(set.signingReady).toBe(true);
    expect(set.handles()).toEqual([]);
  });

  it('refuses an empty set and a repeated kid, naming positions only', async () => {
    expect(() => new KeySet([])).toThrow(expect.objectContaining({ code: 'ERR_INVALID_KEY', message: 'a key set needs at least one key' }));
    const hs = await hsJwk();
    const kid = 'looks-like-a-secret-0123456789';
    let caught: unknown;
    try {
      importKeys({
        keys: [
          { ...hs, kid },
          { ...hs, kid: 'b' },
          { ...hs, kid },
        ],
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'ERR_INVALID_KEY', field: 'keys[2].kid', message: 'keys[2].kid: the same kid as keys[0]' });
    expect((caught as Error).message).not.toContain(kid);
  });

  it('shows kids and roles, never material, in JSON and inspect', async () => {
    const hs = await hsJwk();
    const set = importKeys({
      keys: [
        { ...hs, kid: 'a' },
        { ...hs, kid: 'b' },
      ],
    });
    expect(inspect(set)).toBe('KeySet(HS256:a*, HS256:b)');
    const json = JSON.stringify(set);
    expect(JSON.parse(json)).toEqual({ keys: set.keys });
    expect(json).not.toContain(String(hs['k']));
    expect(inspect(set, { depth: 10 })).not.toContain(String(hs['k']));
  });
});
