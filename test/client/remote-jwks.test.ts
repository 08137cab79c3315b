/**
 * parseJwks: a fetched JWK Set becomes a KeySet of the keys that import; each key that does not
 * is refused with its kid, a reason and the problem, and never reaches the set. A set that is not
 * JSON or has no "keys" array is refused whole.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseJwks } from '../../src/protected-service/remote-jwks.js';
import { type Jwk, exportKeys, generateKeys } from '../../src/lib/index.js';

let es: Jwk;
let rs: Jwk;
beforeAll(async () => {
  [es, rs] = exportKeys(await generateKeys({ algorithms: ['ES256', 'RS256'] })).keys as [Jwk, Jwk];
});

describe('parseJwks', () => {
  it('imports every usable public key, with no refusal', () => {
    const parsed = parseJwks(JSON.stringify({ keys: [es, rs] }), 'https://issuer');
    expect(parsed.refused).toEqual([]);
    expect(parsed.keys.map((k) => k.kid)).toEqual([es.kid, rs.kid]);
    expect(parsed.keySet?.keys).toEqual(parsed.keys);
  });

  it('refuses a secret (oct) key and a key for another use, keeping the rest', () => {
    const oct = { kty: 'oct', k: 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0cw', kid: 'hs', alg: 'HS256' };
    const enc = { ...rs, kid: 'enc', use: 'enc' };
    const parsed = parseJwks(JSON.stringify({ keys: [oct, es, enc] }), 'https://issuer');
    expect(parsed.keys.map((k) => k.kid)).toEqual([es.kid]);
    expect(parsed.refused).toEqual([
      { kid: 'hs', reason: 'unsupported', problem: 'secret (oct) keys are never taken from a JWK Set' },
      { kid: 'enc', reason: 'unsupported', problem: 'use "enc" is not "sig"' },
    ]);
  });

  it('names a key without a usable kid by its place, and a non-object as malformed', () => {
    const parsed = parseJwks(JSON.stringify({ keys: ['nope', { ...es, kid: '', x: 'AAAA' }] }), 'https://issuer');
    expect(parsed.keySet).toBeUndefined();
    expect(parsed.keys).toEqual([]);
    expect(parsed.refused[0]).toEqual({ kid: 'keys[0]', reason: 'malformed', problem: 'not an object' });
    expect(parsed.refused[1]).toMatchObject({ kid: 'keys[1]' });
    expect(parsed.refused[1]?.problem).not.toMatch(/^keys\[0\]/);
  });

  it('never carries private members into the set', () => {
    const parsed = parseJwks(JSON.stringify({ keys: [{ ...es, d: 'private-member-never-kept' }] }), 'https://issuer');
    expect(JSON.stringify(exportKeys(parsed.keySet as NonNullable<typeof parsed.keySet>))).not.toContain('private-member');
  });

  it.each([
    ['{not json', 'issuer https://issuer served a JWK Set that is not JSON'],
    ['null', 'issuer https://issuer served a JWK Set without a "keys" array'],
    ['{"keys":{}}', 'issuer https://issuer served a JWK Set without a "keys" array'],
  ])('refuses %s whole with ERR_INVALID_KEY', (json, message) => {
    expect(() => parseJwks(json, 'https://issuer')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_KEY', message }));
  });

  it('refuses a set with a repeated kid', () => {
    expect(() => parseJwks(JSON.stringify({ keys: [es, { ...rs, kid: es.kid }] }), 'https://issuer')).toThrow(
      expect.objectContaining({ code: expect.stringMatching(/^ERR_/) }),
    );
  });
});
