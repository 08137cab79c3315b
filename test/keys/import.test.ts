import { type KeyObject, generateKeyPairSync, randomBytes } from 'node:crypto';
import * as jose from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, type Algorithm, JwtGrpcError, type KeySet, createSigner, createVerifier, importKeys } from '../../src/lib/index.js';
import { expectValid, makeToken, nowSeconds } from '../tokens/helpers.js';

type Pair = { privateKey: KeyObject; publicKey: KeyObject };

let ec256: Pair;
let ec256b: Pair;
let ec384: Pair;
let ed: Pair;
let rsa: Pair;
let rsa1024: Pair;
const secret32 = randomBytes(32);
const secret48 = randomBytes(48);
const secret64 = randomBytes(64);

beforeAll(() => {
  ec256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  ec256b = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  ec384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
  ed = generateKeyPairSync('ed25519');
  rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
});

const jwk = (key: KeyObject): Record<string, unknown> => ({ ...key.export({ format: 'jwk' }) });
const oct = (secret: Buffer, kid: string, alg: string, extra: Record<string, unknown> = {}) => ({
  kty: 'oct',
  k: secret.toString('base64url'),
  kid,
  alg,
  ...extra,
});

function importError(input: unknown): JwtGrpcError {
  try {
    importKeys(input);
  } catch (err) {
    expect(err).toBeInstanceOf(JwtGrpcError);
    return err as JwtGrpcError;
  }
  throw new Error('importKeys did not throw');
}

function claims(): Record<string, unknown> {
  const now = nowSeconds();
  return { sub: 'ada', iat: now, exp: now + 300 };
}

/** Checks a token of ours with jose and the original public key (or secret). */
async function joseAccepts(token: string, alg: Algorithm, key: KeyObject | Buffer): Promise<string | undefined> {
  const joseKey = Buffer.isBuffer(key) ? new Uint8Array(key) : await jose.importJWK(jwk(key) as jose.JWK, alg);
  const { protectedHeader } = await jose.jwtVerify(token, joseKey, { algorithms: [alg] });
  return protectedHeader.kid;
}

describe('a JWK Set of private keys of every type', () => {
  let keys: KeySet;
  beforeAll(() => {
    keys = importKeys({
      keys: [
        oct(secret32, 'hs256', 'HS256'),
        oct(secret48, 'hs384', 'HS384'),
        oct(secret64, 'hs512', 'HS512'),
        { ...jwk(ec256.privateKey), kid: 'es256', alg: 'ES256' },
        { ...jwk(ec384.privateKey), kid: 'es384', alg: 'ES384' },
        { ...jwk(rsa.privateKey), kid: 'rs256', alg: 'RS256' },
        { ...jwk(rsa.privateKey), kid: 'ps256', alg: 'PS256' },
        { ...jwk(ed.privateKey), kid: 'eddsa', alg: 'EdDSA', use: 'sig' },
      ],
    });
  });

  it('imports, every key active and able to sign, in the order given', () => {
    expect(keys.keys).toEqual([
      { kid: 'hs256', alg: 'HS256', active: true, canSign: true },
      { kid: 'hs384', alg: 'HS384', active: true, canSign: true },
      { kid: 'hs512', alg: 'HS512', active: true, canSign: true },
      { kid: 'es256', alg: 'ES256', active: true, canSign: true },
      { kid: 'es384', alg: 'ES384', active: true, canSign: true },
      { kid: 'rs256', alg: 'RS256', active: true, canSign: true },
      { kid: 'ps256', alg: 'PS256', active: true, canSign: true },
      { kid: 'eddsa', alg: 'EdDSA', active: true, canSign: true },
    ]);
    expect(keys.signingAlgorithms).toEqual(['HS256', 'HS384', 'HS512', 'ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']);
  });

  it('signs with the very keys given: jose verifies with the original public keys and secrets', async () => {
    const signer = createSigner(keys);
    const material: Array<[Algorithm, KeyObject | Buffer]> = [
      ['HS256', secret32],
      ['HS384', secret48],
      ['HS512', secret64],
      ['ES256', ec256.publicKey],
      ['ES384', ec384.publicKey],
      ['RS256', rsa.publicKey],
      ['PS256', rsa.publicKey],
      ['EdDSA', ed.publicKey],
    ];
    for (const [alg, key] of material) {
      const { token, kid } = signer.sign(alg, claims());
      expect(await joseAccepts(token, alg, key)).toBe(kid);
      expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token));
    }
  });
});

describe('verify-only keys', () => {
  it('a public JWK verifies tokens of its private key but never signs', () => {
    const keys = importKeys({ keys: [{ ...jwk(ec256.publicKey), kid: 'ec-pub', alg: 'ES256' }] });
    expect(keys.keys).toEqual([{ kid: 'ec-pub', alg: 'ES256', active: false, canSign: false }]);
    expect(keys.signingAlgorithms).toEqual([]);
    expect(createSigner(keys).algorithms).toEqual([]);
    expect(() => createSigner(keys).sign('ES256', claims())).toThrow(expect.objectContaining({ code: 'ERR_INVALID_REQUEST' }));

    const token = makeToken({ alg: 'ES256', typ: 'JWT', kid: 'ec-pub' }, claims(), 'ES256', ec256.privateKey);
    expect(expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token)).kid).toBe('ec-pub');
    // ...and not those of another key.
    const forged = makeToken({ alg: 'ES256', typ: 'JWT', kid: 'ec-pub' }, claims(), 'ES256', ec256b.privateKey);
    expect(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(forged)).toMatchObject({ valid: false, reason: 'BAD_SIGNATURE' });
  });

  it.each([
    ['RSA', 'RS256', () => rsa],
    ['OKP', 'EdDSA', () => ed],
    ['EC P-384', 'ES384', () => ec384],
  ] as const)('a public %s JWK is verify-only too', (_kty, alg, pair) => {
    const keys = importKeys({ keys: [{ ...jwk(pair().publicKey), kid: 'pub', alg }, oct(secret32, 'hs', 'HS256')] });
    expect(keys.signingAlgorithms).toEqual(['HS256']);
    const token = makeToken({ alg, kid: 'pub' }, claims(), alg, pair().privateKey);
    expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token));
  });

  it("an oct key with key_ops ['verify'] is verify-only", () => {
    const keys = importKeys({ keys: [oct(secret32, 'hs-verify', 'HS256', { key_ops: ['verify'] })] });
    expect(keys.keys).toEqual([{ kid: 'hs-verify', alg: 'HS256', active: false, canSign: false }]);
    expect(keys.signingAlgorithms).toEqual([]);
    const token = makeToken({ alg: 'HS256', kid: 'hs-verify' }, claims(), 'HS256', secret32);
    expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token));
  });

  it("key_ops ['sign', 'verify'] signs; a private EC key with key_ops ['verify'] does not", () => {
    const keys = importKeys({
      keys: [
        oct(secret32, 'hs', 'HS256', { key_ops: ['sign', 'verify'] }),
        { ...jwk(ec256.privateKey), kid: 'es', alg: 'ES256', key_ops: ['verify'] },
      ],
    });
    expect(keys.signingAlgorithms).toEqual(['HS256']);
    expectValid(
      createVerifier(keys, { audience: ANY_AUDIENCE }).verify(makeToken({ alg: 'ES256', kid: 'es' }, claims(), 'ES256', ec256.privateKey)),
    );
  });
});

describe('rotation', () => {
  it('the first signing key of an algorithm is active; later ones only verify', async () => {
    const keys = importKeys({
      keys: [
        { ...jwk(ec256.publicKey), kid: 'es-partner', alg: 'ES256' },
        { ...jwk(ec256b.privateKey), kid: 'es-2026', alg: 'ES256' },
        { ...jwk(ec256.privateKey), kid: 'es-2025', alg: 'ES256' },
        oct(secret32, 'hs-2026', 'HS256'),
        oct(randomBytes(32), 'hs-2025', 'HS256'),
      ],
    });
    expect(keys.keys).toEqual([
      { kid: 'es-partner', alg: 'ES256', active: false, canSign: false },
      { kid: 'es-2026', alg: 'ES256', active: true, canSign: true },
      { kid: 'es-2025', alg: 'ES256', active: false, canSign: true },
      { kid: 'hs-2026', alg: 'HS256', active: true, canSign: true },
      { kid: 'hs-2025', alg: 'HS256', active: false, canSign: true },
    ]);
    const signed = createSigner(keys).sign('ES256', claims());
    expect(signed.kid).toBe('es-2026');
    expect(await joseAccepts(signed.token, 'ES256', ec256b.publicKey)).toBe('es-2026');
    expect(createSigner(keys).sign('HS256', claims()).kid).toBe('hs-2026');

    // The rotated-out key still verifies what it signed.
    const old = makeToken({ alg: 'ES256', kid: 'es-2025' }, claims(), 'ES256', ec256.privateKey);
    expect(expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(old)).kid).toBe('es-2025');
  });
});

describe('refusals', () => {
  it.each([
    ['HS256', 16],
    ['HS256', 31],
    ['HS384', 32],
    ['HS384', 47],
    ['HS512', 48],
  ])('an %s secret of %i bytes is ERR_INVALID_KEY naming its place in the key file, not its kid', (alg, bytes) => {
    const secret = randomBytes(bytes);
    const err = importError({ keys: [oct(secret, 'short-secret', alg)] });
    expect(err.code).toBe('ERR_INVALID_KEY');
    expect(err.message).toMatch(/^keys\[0\]: /);
    expect(err.message).not.toContain('short-secret');
    expect(err.field).toBe('keys[0]');
    expect(err.message).not.toContain(secret.toString('base64url'));
  });

  it.each([
    ['HS256', 32],
    ['HS384', 48],
    ['HS512', 64],
    ['HS256', 64],
  ])('an %s secret of %i bytes is accepted', (alg, bytes) => {
    expect(importKeys({ keys: [oct(randomBytes(bytes), 'ok', alg)] }).signingAlgorithms).toEqual([alg]);
  });

  it.each(['RS256', 'PS256'])('a 1024-bit RSA key for %s is refused, as JWK and as PEM, private or public', (alg) => {
    const inputs = [
      { ...jwk(rsa1024.privateKey), kid: 'rsa-1024', alg },
      { ...jwk(rsa1024.publicKey), kid: 'rsa-1024', alg },
      { pem: rsa1024.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, kid: 'rsa-1024', alg },
      { pem: rsa1024.publicKey.export({ type: 'spki', format: 'pem' }) as string, kid: 'rsa-1024', alg },
    ];
    for (const input of inputs) {
      const err = importError({ keys: [input] });
      expect(err.code).toBe('ERR_INVALID_KEY');
      expect(err.message).toMatch(/^keys\[0\]: /);
      expect(err.message).toContain('1024');
    }
  });

  it.each([
    ['an EC P-256 key', 'RS256', () => jwk(ec256.privateKey)],
    ['an EC P-256 key', 'ES384', () => jwk(ec256.privateKey)],
    ['an EC P-384 key', 'ES256', () => jwk(ec384.privateKey)],
    ['an EC key', 'HS256', () => jwk(ec256.privateKey)],
    ['an EC key', 'EdDSA', () => jwk(ec256.publicKey)],
    ['an RSA key', 'ES256', () => jwk(rsa.privateKey)],
    ['an RSA key', 'EdDSA', () => jwk(rsa.publicKey)],
    ['an RSA key', 'HS256', () => jwk(rsa.publicKey)],
    ['an Ed25519 key', 'ES256', () => jwk(ed.privateKey)],
    ['an Ed25519 key', 'RS256', () => jwk(ed.publicKey)],
    ['an oct key', 'ES256', () => ({ kty: 'oct', k: secret32.toString('base64url') })],
    ['an oct key', 'RS256', () => ({ kty: 'oct', k: secret32.toString('base64url') })],
    ['an oct key', 'EdDSA', () => ({ kty: 'oct', k: secret32.toString('base64url') })],
  ])('%s with alg %s is ERR_INVALID_KEY', (_what, alg, key) => {
    const err = importError({ keys: [{ ...key(), kid: 'mismatch', alg }] });
    expect(err.code).toBe('ERR_INVALID_KEY');
    expect(err.message).toMatch(/^keys\[0\]: /);
  });

  it('a PEM of the wrong type for the algorithm is ERR_INVALID_KEY', () => {
    const pem = ec256.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    expect(importError({ keys: [{ pem, kid: 'ec-as-hmac', alg: 'HS256' }] }).code).toBe('ERR_INVALID_KEY');
    expect(importError({ keys: [{ pem, kid: 'ec-as-rsa', alg: 'RS256' }] }).code).toBe('ERR_INVALID_KEY');
  });

  it('a duplicate kid is ERR_INVALID_KEY naming both places, even across algorithms, never the kid', () => {
    for (const second of [oct(randomBytes(32), 'twice', 'HS256'), { ...jwk(ec256.privateKey), kid: 'twice', alg: 'ES256' }]) {
      const err = importError({ keys: [oct(secret32, 'twice', 'HS256'), second] });
      expect(err.code).toBe('ERR_INVALID_KEY');
      expect(err.message).toBe('keys[1].kid: the same kid as keys[0]');
    }
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['a number', 7],
    ['257 characters', 'k'.repeat(257)],
  ])('a kid that is %s is ERR_INVALID_KEY', (_what, kid) => {
    const entry: Record<string, unknown> = { kty: 'oct', k: secret32.toString('base64url'), alg: 'HS256' };
    if (kid !== undefined) entry['kid'] = kid;
    const err = importError({ keys: [oct(randomBytes(32), 'fine', 'HS256'), entry] });
    expect(err.code).toBe('ERR_INVALID_KEY');
    expect(err.field).toBe('keys[1].kid');
  });

  it('a 256-character kid is accepted', () => {
    const kid = 'k'.repeat(256);
    const keys = importKeys({ keys: [oct(secret32, kid, 'HS256')] });
    const token = makeToken({ alg: 'HS256', kid }, claims(), 'HS256', secret32);
    expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token));
  });

  it.each([['none'], ['RS512'], ['es256'], ['HS256 '], [undefined], [256]])(
    'alg %j is ERR_INVALID_KEY naming keys[0].alg, not its value',
    (alg) => {
      const err = importError({ keys: [{ kty: 'oct', k: secret32.toString('base64url'), kid: 'which-alg', alg }] });
      expect(err.code).toBe('ERR_INVALID_KEY');
      expect(err.message).toMatch(/^keys\[0\]\.alg: is not one of /);
      expect(err.field).toBe('keys[0].alg');
      expect(err.message).not.toContain('which-alg');
    },
  );

  it.each([
    ['null', null],
    ['a string', 'keys'],
    ['an empty object', {}],
    ['an empty keys array', { keys: [] }],
    ['keys not an array', { keys: { kid: 'x' } }],
    ['a bare array of JWKs', [{ kty: 'oct', k: 'x', kid: 'x', alg: 'HS256' }]],
    ['an entry that is not an object', { keys: [42] }],
    ['an entry that is null', { keys: [null] }],
  ])('%s is not a JWK Set: ERR_INVALID_KEY', (_what, input) => {
    expect(importError(input).code).toBe('ERR_INVALID_KEY');
  });

  it('broken key material is ERR_INVALID_KEY whose message carries no key material', () => {
    const priv = jwk(ec256.privateKey);
    const broken = [
      { ...priv, y: undefined, kid: 'no-y', alg: 'ES256' },
      { ...priv, x: 'bm90LWEtcG9pbnQ', kid: 'bad-x', alg: 'ES256' },
      { kty: 'oct', kid: 'no-k', alg: 'HS256' },
      { kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'tiny-rsa', alg: 'RS256' },
      { pem: '-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----', kid: 'bad-pem', alg: 'ES256' },
    ];
    for (const entry of broken) {
      const err = importError({ keys: [entry] });
      expect(err.code).toBe('ERR_INVALID_KEY');
      expect(err.message).toMatch(/^keys\[0\]: /);
      expect(err.message).not.toContain(entry.kid);
      expect(err.message).not.toContain(priv['d'] as string);
    }
  });
});

describe('PEM entries', () => {
  it('private PEMs (PKCS#8, SEC1, PKCS#1) sign; public PEMs (SPKI) only verify', async () => {
    const keys = importKeys({
      keys: [
        { kid: 'ec-pkcs8', alg: 'ES256', pem: ec256.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string },
        { kid: 'ec-sec1', alg: 'ES384', pem: ec384.privateKey.export({ type: 'sec1', format: 'pem' }) as string },
        { kid: 'rsa-pkcs1', alg: 'RS256', pem: rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string },
        { kid: 'ed-spki', alg: 'EdDSA', pem: ed.publicKey.export({ type: 'spki', format: 'pem' }) as string },
      ],
    });
    expect(keys.signingAlgorithms).toEqual(['ES256', 'ES384', 'RS256']);
    const signer = createSigner(keys);
    expect(await joseAccepts(signer.sign('ES256', claims()).token, 'ES256', ec256.publicKey)).toBe('ec-pkcs8');
    expect(await joseAccepts(signer.sign('ES384', claims()).token, 'ES384', ec384.publicKey)).toBe('ec-sec1');
    expect(await joseAccepts(signer.sign('RS256', claims()).token, 'RS256', rsa.publicKey)).toBe('rsa-pkcs1');
    expectValid(
      createVerifier(keys, { audience: ANY_AUDIENCE }).verify(
        makeToken({ alg: 'EdDSA', kid: 'ed-spki' }, claims(), 'EdDSA', ed.privateKey),
      ),
    );
  });
});
