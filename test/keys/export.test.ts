import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  ALGORITHMS,
  type KeySet,
  createSigner,
  createVerifier,
  exportKeys,
  generateKeys,
  importKeys,
} from '../../src/lib/index.js';
import { expectValid, makeToken, nowSeconds } from '../tokens/helpers.js';

const PRIVATE_MEMBERS = ['d', 'k', 'p', 'q', 'dp', 'dq', 'qi', 'oth'];

let keys: KeySet;

beforeAll(async () => {
  keys = await generateKeys();
});

const claims = () => ({ sub: 'ada', exp: nowSeconds() + 300 });

describe('exportKeys(keys): the public JWK Set', () => {
  it('has one entry per asymmetric key, in order, with kid, alg and use: sig', () => {
    const { keys: jwks } = exportKeys(keys);
    const asymmetric = keys.keys.filter((k) => !k.alg.startsWith('HS'));
    expect(asymmetric).toHaveLength(5);
    expect(jwks.map((k) => [k.kid, k.alg])).toEqual(asymmetric.map((k) => [k.kid, k.alg]));
    for (const jwk of jwks) {
      expect(jwk.use).toBe('sig');
      expect(typeof jwk.kid).toBe('string');
    }
  });

  it('never contains a private member or an oct key', () => {
    const { keys: jwks } = exportKeys(keys);
    for (const jwk of jwks) {
      expect(jwk.kty).not.toBe('oct');
      for (const member of PRIVATE_MEMBERS) expect(Object.keys(jwk)).not.toContain(member);
      expect(Object.keys(jwk).every((m) => ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use'].includes(m))).toBe(true);
    }
    // Nor the values of any secret, anywhere in the text.
    const text = JSON.stringify(exportKeys(keys));
    for (const full of exportKeys(keys, { includePrivate: true }).keys) {
      for (const member of PRIVATE_MEMBERS) {
        const value = (full as Record<string, unknown>)[member];
        if (typeof value === 'string') expect(text).not.toContain(value);
      }
    }
  });

  it('has the right key types per algorithm', () => {
    const byAlg = Object.fromEntries(exportKeys(keys).keys.map((k) => [k.alg, k]));
    expect(byAlg['ES256']).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(byAlg['ES384']).toMatchObject({ kty: 'EC', crv: 'P-384' });
    expect(byAlg['RS256']).toMatchObject({ kty: 'RSA', e: 'AQAB' });
    expect(byAlg['PS256']).toMatchObject({ kty: 'RSA', e: 'AQAB' });
    expect(byAlg['EdDSA']).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
  });

  it('imports back as a verify-only set that verifies the original tokens', () => {
    const publicSet = importKeys(exportKeys(keys));
    expect(publicSet.signingAlgorithms).toEqual([]);
    const signer = createSigner(keys);
    const verifier = createVerifier(publicSet, { audience: ANY_AUDIENCE });
    for (const alg of ALGORITHMS) {
      const { token } = signer.sign(alg, claims());
      const result = verifier.verify(token);
      // HMAC secrets were not exported, so their kids are unknown there.
      if (alg.startsWith('HS')) expect(result).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
      else expectValid(result);
    }
  });

  it('exports verify-only public keys too, still without private members', () => {
    const publicSet = importKeys(exportKeys(keys));
    expect(exportKeys(publicSet)).toEqual(exportKeys(keys));
  });
});

describe('exportKeys(keys, { includePrivate: true })', () => {
  it('holds every key with its secret members', () => {
    const { keys: full } = exportKeys(keys, { includePrivate: true });
    expect(full.map((k) => k.kid)).toEqual(keys.keys.map((k) => k.kid));
    for (const jwk of full) {
      if (jwk.alg.startsWith('HS')) expect(jwk).toMatchObject({ kty: 'oct', k: expect.any(String) });
      else expect(jwk.d).toEqual(expect.any(String));
    }
  });

  it('round-trips: the imported copy signs tokens the original verifies, and the reverse', () => {
    const copy = importKeys(exportKeys(keys, { includePrivate: true }));
    expect(copy.keys).toEqual(keys.keys);
    for (const alg of ALGORITHMS) {
      expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(createSigner(copy).sign(alg, claims()).token));
      expectValid(createVerifier(copy, { audience: ANY_AUDIENCE }).verify(createSigner(keys).sign(alg, claims()).token));
    }
  });

  it('a verify-only oct key stays verify-only', () => {
    const secret = randomBytes(32);
    const set = importKeys({
      keys: [{ kty: 'oct', k: secret.toString('base64url'), kid: 'hs-verify', alg: 'HS256', key_ops: ['verify'] }],
    });
    const { keys: full } = exportKeys(set, { includePrivate: true });
    expect(full[0]).toMatchObject({ kid: 'hs-verify', key_ops: ['verify'] });
    const again = importKeys({ keys: full });
    expect(again.signingAlgorithms).toEqual([]);
    expectValid(
      createVerifier(again, { audience: ANY_AUDIENCE }).verify(makeToken({ alg: 'HS256', kid: 'hs-verify' }, claims(), 'HS256', secret)),
    );
    // The HMAC key is never in the public export, verify-only or not.
    expect(exportKeys(set).keys).toEqual([]);
  });
});

describe('a KeySet keeps its key material out of logs', () => {
  it('util.inspect, JSON.stringify and keys.keys show no secret or private member', () => {
    const secrets: string[] = [];
    for (const jwk of exportKeys(keys, { includePrivate: true }).keys) {
      for (const member of PRIVATE_MEMBERS) {
        const value = (jwk as Record<string, unknown>)[member];
        if (typeof value === 'string') secrets.push(value);
      }
    }
    expect(secrets.length).toBeGreaterThanOrEqual(8);

    const renderings = [
      inspect(keys),
      inspect(keys, { depth: Infinity, showHidden: true }),
      inspect({ config: { keys } }, { depth: Infinity }),
      inspect(keys, { customInspect: false, depth: Infinity, showHidden: true }),
      JSON.stringify(keys),
      JSON.stringify({ keys }),
      JSON.stringify(keys.keys),
      String(keys),
      `${JSON.stringify(keys.keys[0])}`,
    ];
    for (const text of renderings) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    // What they do show: the kids.
    for (const info of keys.keys) expect(inspect(keys)).toContain(info.kid);
    expect(JSON.parse(JSON.stringify(keys))).toEqual({ keys: keys.keys.map((k) => ({ ...k })) });
  });
});
