/**
 * The signer (src/tokens/sign.ts): the active key of each algorithm signs a compact JWS the
 * verifier accepts; an algorithm without a key, claims no verifier would accept, an unknown
 * option and a handle on the synchronous path are refused, naming the problem; checkIssued,
 * GenerateJwt's self-check, verifies the signature it is given.
 */
import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALGORITHM_SPECS } from '../../src/algorithms/index.js';
import { KeyHandle } from '../../src/keys/backend.js';
import { ALGORITHMS, ANY_AUDIENCE, KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib/index.js';
import { activeKid, nowSeconds, tokenFor } from './helpers.js';

const exp = () => Math.floor(Date.now() / 1000) + 60;

function decode(part: string): unknown {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

describe('createSigner', () => {
  it('signs with the active key of each algorithm, header first, claims as given', async () => {
    const keys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
    const signer = createSigner(keys);
    expect(signer.algorithms).toEqual(['ES256', 'HS256']);
    const claims = { sub: 'alice', exp: exp(), extra: { n: 1 } };
    const signed = signer.sign('ES256', claims);
    const [header, payload] = signed.token.split('.');
    expect(decode(header as string)).toEqual({ alg: 'ES256', typ: 'JWT', kid: keys.activeEntry('ES256')?.kid });
    expect(decode(payload as string)).toEqual(claims);
    expect(signed).toMatchObject({ alg: 'ES256', kid: keys.activeEntry('ES256')?.kid });
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
    expect(verifier.verify(signed.token)).toMatchObject({ valid: true, payload: claims });
    await expect(signer.signAsync('HS256', claims).then((s) => verifier.verify(s.token).valid)).resolves.toBe(true);
  });

  it('encodes any claims as UTF-8 JSON: non-ASCII, and past the size the signer encodes without a buffer of its own', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    const signer = createSigner(keys);
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
    // 4,096 bytes of scratch: JSON of up to 1,365 UTF-16 units goes through it, longer takes its own buffer.
    for (const note of ['é', 'naïve 🙂 日本', 'x'.repeat(1300), 'x'.repeat(1400), '€'.repeat(1400), 'ok']) {
      const claims = { sub: 'alice', exp: exp(), note };
      const signed = signer.sign('HS256', claims);
      const payload = signed.token.split('.')[1] as string;
      expect(payload).toBe(Buffer.from(JSON.stringify(claims)).toString('base64url'));
      expect(verifier.verify(signed.token)).toMatchObject({ valid: true, payload: claims });
    }
  });

  it('refuses an algorithm without an active key, and one that does not exist, listing those configured', async () => {
    const signer = createSigner(await generateKeys({ algorithms: ['ES256'] }));
    expect(() => signer.sign('HS256', { exp: exp() })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_REQUEST',
        field: 'algorithm',
        message: 'algorithm "HS256" is not configured for signing; configured: ES256',
      }),
    );
    for (const alg of ['RS256', 'EdDSA', 'HS512']) expect(() => signer.sign(alg, { exp: exp() })).toThrow(`"${alg}" is not configured`);
    for (const alg of ['none', 'HS999', 'hs256', '', 'RS512', '__proto__']) {
      expect(() => signer.sign(alg, { exp: exp() })).toThrow(
        new RegExp(`^algorithm ${JSON.stringify(alg)} is not a supported algorithm \\(HS256, .*EdDSA\\); configured: ES256$`),
      );
    }
    await expect(signer.signAsync('es256', { exp: exp() })).rejects.toMatchObject({ code: 'ERR_INVALID_REQUEST' });
  });

  it.each([
    ['no exp', { sub: 'x' }, 'claim exp is missing: tokens without expiry are refused'],
    ['exp as a string', { sub: 'x', exp: '1' }, 'claim exp must be a number of seconds'],
    ['exp not finite', { sub: 'x', exp: Number.NaN }, 'claim exp must be a number of seconds'],
    ['sub not a string', { sub: 42, exp: exp() }, 'claim sub must be a string'],
    ['aud a number', { aud: 1, exp: exp() }, 'claim aud must be a string or an array of strings'],
  ])('never makes a token nobody can verify: %s is refused naming the claim', async (_what, claims, message) => {
    const signer = createSigner(await generateKeys({ algorithms: ['HS256'] }));
    expect(() => signer.sign('HS256', claims)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_REQUEST',
        field: 'claims',
        message: expect.stringContaining(`cannot sign: ${message}`),
      }),
    );
  });

  it('refuses an unknown option and a timeout out of bounds, naming them', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    expect(() => createSigner(keys, { keyBackendTimeout: 5 } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: expect.stringContaining('keyBackendTimeout') }),
    );
    expect(() => createSigner(keys, { keyBackendTimeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'keyBackendTimeoutMs' }),
    );
  });

  it('signs with a handle only through signAsync', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spec = ALGORITHM_SPECS.ES256;
    const publicJwk = spec.publicJwk(publicKey) ?? {};
    const handle = new KeyHandle(
      {
        member: 'fake-hsm',
        packageName: 'none',
        open: async () => ({
          publicJwk,
          sign: async (data) => Buffer.from(spec.prepareSign(privateKey)(Buffer.from(data)), 'base64url'),
          close: async () => {},
        }),
      },
      'ref',
      'hsm-1',
      'ES256',
      publicJwk,
    );
    const keys = new KeySet([{ kid: 'hsm-1', alg: 'ES256', spec, signingKey: undefined, verificationKey: publicKey, handle }]);
    const signer = createSigner(keys);
    expect(signer.isAsync('ES256')).toBe(true);
    expect(() => signer.sign('ES256', { exp: exp() })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_KEY',
        field: 'hsm-1',
        message: 'key hsm-1 is held by fake-hsm: it signs only through signAsync',
      }),
    );
    const signed = await signer.signAsync('ES256', { exp: exp() });
    expect(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(signed.token)).toMatchObject({ valid: true, kid: 'hsm-1' });
    await handle.close();
  });
});

let keys: KeySet;
let otherKeys: KeySet;

beforeAll(async () => {
  [keys, otherKeys] = await Promise.all([generateKeys(), generateKeys()]);
});

function claims(sub: string): Record<string, unknown> {
  const now = nowSeconds();
  return { sub, iat: now, exp: now + 600 };
}

/** `token`'s signing input with `signature`'s last segment. */
function withSignatureOf(token: string, signature: string): string {
  return token.slice(0, token.lastIndexOf('.')) + signature.slice(signature.lastIndexOf('.'));
}

describe('Signer.checkIssued: the self-check of GenerateJwt', () => {
  it.each(ALGORITHMS)('%s: a token this signer issued passes', (alg) => {
    const signer = createSigner(keys);
    expect(signer.checkIssued(signer.sign(alg, claims('ada@example.com')))).toBe(true);
  });

  it.each(ALGORITHMS)('%s: the signature really is verified: another signature of the same key fails', (alg) => {
    const signer = createSigner(keys);
    const issued = signer.sign(alg, claims('ada@example.com'));
    const other = signer.sign(alg, claims('bob@example.com'));
    // Same header, same key, a well-formed signature: only verifying it over this input tells them apart.
    expect(signer.checkIssued({ ...issued, token: withSignatureOf(issued.token, other.token) })).toBe(false);
  });

  it.each(ALGORITHMS)('%s: a token of another key (same algorithm) fails', (alg) => {
    const issued = createSigner(otherKeys).sign(alg, claims('ada@example.com'));
    expect(createSigner(keys).checkIssued(issued)).toBe(false);
  });

  it.each(['HS256', 'ES256'] as const)(
    '%s: a token of the same key whose header is not the one this signer writes fails, its signature valid',
    (alg) => {
      const signer = createSigner(keys);
      const kid = activeKid(keys, alg);
      const forged = tokenFor(keys, kid, claims('ada@example.com'), { crit: ['x'] });
      expect(signer.checkIssued({ token: tokenFor(keys, kid, claims('ada@example.com')), kid, alg })).toBe(true);
      expect(signer.checkIssued({ token: forged, kid, alg })).toBe(false);
    },
  );

  it.each(ALGORITHMS)('%s: what sign returns shows token, kid and alg only, and a copy of it checks as the original does', (alg) => {
    const signer = createSigner(keys);
    const issued = signer.sign(alg, claims('ada@example.com'));
    expect(Object.keys(issued)).toEqual(['token', 'kid', 'alg']);
    expect(JSON.parse(JSON.stringify(issued))).toEqual({ token: issued.token, kid: issued.kid, alg });
    // A plain copy has no private parts: the token itself is read, and passes.
    expect(signer.checkIssued({ ...issued })).toBe(true);
  });

  it.each(ALGORITHMS)('%s: a token replaced on the object sign returned is checked as it now reads, not as it was made', (alg) => {
    const signer = createSigner(keys);
    const issued = signer.sign(alg, claims('ada@example.com'));
    const other = signer.sign(alg, claims('bob@example.com'));
    const { token } = issued;
    (issued as { token: string }).token = withSignatureOf(token, other.token);
    expect(signer.checkIssued(issued)).toBe(false);
    (issued as { token: string }).token = token;
    expect(signer.checkIssued(issued)).toBe(true);
  });

  it("a token whose header is not this signer's fails, even with a signature of its key over it", () => {
    const signer = createSigner(keys);
    const issued = signer.sign('ES256', claims('ada@example.com'));
    expect(signer.checkIssued({ ...issued, alg: 'HS256' })).toBe(false);
    expect(signer.checkIssued({ ...issued, token: issued.token.slice(0, issued.token.lastIndexOf('.')) })).toBe(false);
  });
});
