/** HS256/384/512 (src/algorithms/hmac.ts): sizes refused by name, MACs compared as canonical text, verify-only secrets kept so. */
import { createHmac, createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmac } from '../../src/algorithms/hmac.js';

const HS256 = hmac('sha256', 32);

describe('hmac', () => {
  it('signs as RFC 7518 HMAC in base64url and verifies only the exact MAC', () => {
    const secret = createSecretKey(randomBytes(32));
    const signature = HS256.prepareSign(secret)(Buffer.from('a.b'));
    expect(signature).toBe(createHmac('sha256', secret).update('a.b').digest('base64url'));
    const check = HS256.prepareVerify(secret);
    expect(check(Buffer.from('a.b'), signature)).toBe(true);
    expect(check(Buffer.from('a.c'), signature)).toBe(false);
    expect(check(Buffer.from('a.b'), signature.slice(0, -1))).toBe(false);
    // Same bytes, another spelling: standard base64 with padding is not the canonical MAC.
    expect(check(Buffer.from('a.b'), Buffer.from(signature, 'base64url').toString('base64'))).toBe(false);
    expect(check(Buffer.from('a.b'), `${signature}=`)).toBe(false);
  });

  it('refuses every other spelling of the right MAC: pad bits set, a character the decoder skips, a MAC too short or too long', () => {
    const secret = createSecretKey(randomBytes(32));
    const mac = createHmac('sha256', secret).update('a.b').digest();
    const signature = mac.toString('base64url');
    const check = HS256.prepareVerify(secret);
    // 32 bytes are 43 characters, the last carrying 2 pad bits (zero when canonical): with
    // one of them set, it decodes to the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const padded = `${signature.slice(0, -1)}${alphabet[alphabet.indexOf(signature.at(-1) as string) | 1]}`;
    expect(Buffer.from(padded, 'base64url').equals(mac)).toBe(true);
    expect(check(Buffer.from('a.b'), padded)).toBe(false);
    const skipped = `${signature.slice(0, 10)}!${signature.slice(10)}`;
    expect(Buffer.from(skipped, 'base64url').equals(mac)).toBe(true);
    expect(check(Buffer.from('a.b'), skipped)).toBe(false);
    expect(check(Buffer.from('a.b'), Buffer.concat([mac, Buffer.from([0])]).toString('base64url'))).toBe(false);
    expect(check(Buffer.from('a.b'), mac.subarray(0, 31).toString('base64url'))).toBe(false);
    expect(check(Buffer.from('a.b'), '')).toBe(false);
    expect(check(Buffer.from('a.b'), signature)).toBe(true);
  });

  it('refuses a short secret and a key that is not a secret, by what it needs', () => {
    expect(HS256.checkKey(createSecretKey(randomBytes(31)))).toBe('needs an HMAC secret of at least 32 bytes, got 31');
    expect(HS256.checkKey(createSecretKey(randomBytes(32)))).toBeUndefined();
    expect(hmac('sha512', 64).checkKey(createSecretKey(randomBytes(48)))).toBe('needs an HMAC secret of at least 64 bytes, got 48');
    expect(HS256.checkKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey)).toBe('needs an oct (secret) key');
  });

  it('generates one secret of the hash size for both roles', async () => {
    const { signingKey, verificationKey } = await hmac('sha384', 48).generate();
    expect(signingKey).toBe(verificationKey);
    expect(signingKey.symmetricKeySize).toBe(48);
  });

  it('never publishes a secret, and exports a verify-only secret as verify-only', () => {
    const secret = createSecretKey(randomBytes(32));
    expect(HS256.publicJwk(secret)).toBeUndefined();
    expect(HS256.fullJwk(secret, secret)).toEqual({ kty: 'oct', k: secret.export().toString('base64url') });
    expect(HS256.fullJwk(undefined, secret)).toMatchObject({ kty: 'oct', key_ops: ['verify'] });
  });
});
