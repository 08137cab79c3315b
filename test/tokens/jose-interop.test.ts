/**
 * jose is the independent reference: our tokens must pass jose, jose's tokens must pass
 * us, and every bad token jose refuses we refuse too, for the reason we document.
 */
import { type KeyObject, sign as cryptoSign } from 'node:crypto';
import * as jose from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  ALGORITHMS,
  type Algorithm,
  type KeySet,
  type VerifyFailureReason,
  createSigner,
  createVerifier,
  exportKeys,
  generateKeys,
} from '../../src/lib/index.js';
import {
  activeKid,
  b64json,
  b64u,
  expectValid,
  flipChar,
  makeToken,
  nowSeconds,
  privateJwk,
  publicKeyObject,
  signingMaterial,
  tokenFor,
} from './helpers.js';

const ASYMMETRIC = ALGORITHMS.filter((alg) => !alg.startsWith('HS'));

let keys: KeySet;
/** Keys of the same algorithms that the server does not have (no RSA: slow, and one family suffices). */
let strangers: KeySet;

beforeAll(async () => {
  [keys, strangers] = await Promise.all([generateKeys(), generateKeys({ algorithms: ['HS256', 'ES256', 'EdDSA'] })]);
});

/** The HMAC secret of the active `alg` key, as jose takes it. */
function secretOf(alg: Algorithm): Uint8Array {
  return Buffer.from(privateJwk(keys, activeKid(keys, alg)).k as string, 'base64url');
}

describe('(a) our tokens pass jose', () => {
  it.each(ALGORITHMS)('%s with the key imported from exportKeys', async (alg) => {
    const now = nowSeconds();
    const claims = { sub: 'ada@example.com', iat: now, exp: now + 300, aud: 'api', iss: 'jwt-grpc' };
    const { token, kid } = createSigner(keys).sign(alg, claims);

    let key: Uint8Array | jose.CryptoKey;
    if (alg.startsWith('HS')) {
      key = secretOf(alg);
      // HMAC keys are secrets: never in the public export.
      expect(exportKeys(keys).keys.find((k) => k.kid === kid)).toBeUndefined();
    } else {
      const jwk = exportKeys(keys).keys.find((k) => k.kid === kid);
      expect(jwk).toBeDefined();
      key = await jose.importJWK(jwk as jose.JWK, alg);
    }
    const { payload, protectedHeader } = await jose.jwtVerify(token, key, {
      algorithms: [alg],
      audience: 'api',
      issuer: 'jwt-grpc',
    });
    expect(payload).toEqual(claims);
    expect(protectedHeader).toEqual({ alg, typ: 'JWT', kid });
  });

  it.each(ASYMMETRIC)('%s through jose.createLocalJWKSet(exportKeys(keys))', async (alg) => {
    const now = nowSeconds();
    const claims = { sub: 'grace@example.com', iat: now, exp: now + 300 };
    const { token, kid } = createSigner(keys).sign(alg, claims);
    const jwks = jose.createLocalJWKSet(exportKeys(keys) as jose.JSONWebKeySet);
    const { payload, protectedHeader } = await jose.jwtVerify(token, jwks, { algorithms: [alg] });
    expect(payload).toEqual(claims);
    expect(protectedHeader.kid).toBe(kid);
  });
});

describe('(b) jose tokens pass our verifier', () => {
  it.each(ALGORITHMS)('%s signed by jose.SignJWT with the exported private key', async (alg) => {
    const kid = activeKid(keys, alg);
    const privateKey = await jose.importJWK(privateJwk(keys, kid) as jose.JWK, alg);
    const claims = { sub: 'linus@example.com', scope: 'read write', aud: ['api', 'web'] };
    const token = await new jose.SignJWT(claims).setProtectedHeader({ alg, kid }).setIssuedAt().setExpirationTime('2h').sign(privateKey);

    const result = expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(token, { audience: 'web' }));
    expect(result.alg).toBe(alg);
    expect(result.kid).toBe(kid);
    expect(result.payload).toMatchObject(claims);
    expect(result.payload.exp - (result.payload.iat as number)).toBe(7200);
  });
});

describe('(c) bad tokens: whatever jose rejects, we reject, for the expected reason', () => {
  const NOW = nowSeconds();
  const TOLERANCE = 5;

  interface Case {
    readonly name: string;
    readonly token: string;
    /** Our verdict. */
    readonly ours: VerifyFailureReason | 'valid';
    /** jose's verdict; 'accepts' marks the checks where we are stricter than jose on purpose. */
    readonly jose: 'rejects' | 'accepts';
    readonly audience?: string;
    readonly issuer?: string;
  }

  function cases(): Case[] {
    const list: Case[] = [];
    const claims = { sub: 'mallory@example.com', iat: NOW - 10, exp: NOW + 600 };
    for (const alg of ALGORITHMS) {
      const kid = activeKid(keys, alg);
      const good = tokenFor(keys, kid, claims);
      const [h, p, s] = good.split('.') as [string, string, string];
      list.push(
        { name: `${alg}: empty signature`, token: `${h}.${p}.`, ours: 'BAD_SIGNATURE', jose: 'rejects' },
        {
          name: `${alg}: tampered payload`,
          token: `${h}.${b64json({ ...claims, sub: 'admin' })}.${s}`,
          ours: 'BAD_SIGNATURE',
          jose: 'rejects',
        },
        { name: `${alg}: tampered signature`, token: `${h}.${p}.${flipChar(s, 0)}`, ours: 'BAD_SIGNATURE', jose: 'rejects' },
        {
          name: `${alg}: exp beyond tolerance`,
          token: tokenFor(keys, kid, { ...claims, exp: NOW - TOLERANCE - 1 }),
          ours: 'EXPIRED',
          jose: 'rejects',
        },
        {
          name: `${alg}: exp exactly at the tolerance edge`,
          token: tokenFor(keys, kid, { ...claims, exp: NOW - TOLERANCE }),
          ours: 'EXPIRED',
          jose: 'rejects',
        },
        {
          name: `${alg}: exp one second inside tolerance`,
          token: tokenFor(keys, kid, { ...claims, exp: NOW - TOLERANCE + 1 }),
          ours: 'valid',
          jose: 'accepts',
        },
        {
          name: `${alg}: nbf beyond tolerance`,
          token: tokenFor(keys, kid, { ...claims, nbf: NOW + TOLERANCE + 1 }),
          ours: 'NOT_YET_VALID',
          jose: 'rejects',
        },
        {
          name: `${alg}: nbf at the tolerance edge`,
          token: tokenFor(keys, kid, { ...claims, nbf: NOW + TOLERANCE }),
          ours: 'valid',
          jose: 'accepts',
        },
        {
          name: `${alg}: exp as a string`,
          token: tokenFor(keys, kid, { ...claims, exp: String(NOW + 600) }),
          ours: 'MALFORMED',
          jose: 'rejects',
        },
        { name: `${alg}: payload a JSON array`, token: tokenFor(keys, kid, [claims]), ours: 'MALFORMED', jose: 'rejects' },
        {
          name: `${alg}: aud mismatch`,
          token: tokenFor(keys, kid, { ...claims, aud: 'web' }),
          audience: 'api',
          ours: 'AUDIENCE_MISMATCH',
          jose: 'rejects',
        },
        {
          name: `${alg}: iss mismatch`,
          token: tokenFor(keys, kid, { ...claims, iss: 'evil' }),
          issuer: 'jwt-grpc',
          ours: 'ISSUER_MISMATCH',
          jose: 'rejects',
        },
        {
          name: `${alg}: unknown crit`,
          token: tokenFor(keys, kid, claims, { crit: ['x-policy'], 'x-policy': 1 }),
          ours: 'UNSUPPORTED_HEADER',
          jose: 'rejects',
        },
        {
          name: `${alg}: unknown kid`,
          token: tokenFor(keys, kid, claims, { kid: `${kid}-retired` }),
          ours: 'UNKNOWN_KEY',
          jose: 'rejects',
        },
      );
    }

    for (const alg of ['none', 'None', 'NONE']) {
      list.push({
        name: `alg ${alg}`,
        token: `${b64json({ alg, typ: 'JWT' })}.${b64json(claims)}.`,
        ours: 'ALGORITHM_NOT_ALLOWED',
        jose: 'rejects',
      });
    }

    const rsKid = activeKid(keys, 'RS256');
    const hsKid = activeKid(keys, 'HS256');
    const rsaPem = publicKeyObject(keys, rsKid).export({ type: 'spki', format: 'pem' });
    list.push(
      {
        name: 'HS256 keyed with the RS256 public PEM, under the RS256 kid',
        token: makeToken({ alg: 'HS256', typ: 'JWT', kid: rsKid }, claims, 'HS256', Buffer.from(rsaPem)),
        ours: 'ALGORITHM_NOT_ALLOWED',
        jose: 'rejects',
      },
      {
        name: 'RS256 token under the HS256 kid',
        token: makeToken({ alg: 'RS256', typ: 'JWT', kid: hsKid }, claims, 'RS256', signingMaterial(keys, rsKid)),
        ours: 'ALGORITHM_NOT_ALLOWED',
        jose: 'rejects',
      },
      {
        name: 'header without alg',
        token: makeToken({ typ: 'JWT', kid: hsKid }, claims, 'HS256', signingMaterial(keys, hsKid)),
        ours: 'ALGORITHM_NOT_ALLOWED',
        jose: 'rejects',
      },
    );

    for (const alg of ['HS256', 'ES256', 'EdDSA'] as const) {
      const kid = activeKid(keys, alg);
      const foreign = signingMaterial(strangers, activeKid(strangers, alg));
      list.push({
        name: `${alg}: signed by another ${alg} key under our kid`,
        token: makeToken({ alg, typ: 'JWT', kid }, claims, alg, foreign),
        ours: 'BAD_SIGNATURE',
        jose: 'rejects',
      });
    }

    for (const [alg, size, hash] of [
      ['ES256', 32, 'sha256'],
      ['ES384', 48, 'sha384'],
    ] as const) {
      const kid = activeKid(keys, alg);
      const input = `${b64json({ alg, typ: 'JWT', kid })}.${b64json(claims)}`;
      const der = cryptoSign(hash, Buffer.from(input), signingMaterial(keys, kid) as KeyObject);
      list.push(
        { name: `${alg}: r = s = 0`, token: `${input}.${b64u(Buffer.alloc(size * 2))}`, ours: 'BAD_SIGNATURE', jose: 'rejects' },
        { name: `${alg}: DER signature`, token: `${input}.${der.toString('base64url')}`, ours: 'BAD_SIGNATURE', jose: 'rejects' },
      );
    }

    const es = tokenFor(keys, activeKid(keys, 'ES256'), claims);
    const [eh, ep, esig] = es.split('.') as [string, string, string];
    list.push(
      { name: 'two segments', token: `${eh}.${ep}`, ours: 'MALFORMED', jose: 'rejects' },
      { name: 'four segments', token: `${es}.${esig}`, ours: 'MALFORMED', jose: 'rejects' },
      { name: 'header not JSON', token: `${b64u('{alg:ES256')}.${ep}.${esig}`, ours: 'MALFORMED', jose: 'rejects' },
      { name: 'header a JSON array', token: `${b64json([{ alg: 'ES256' }])}.${ep}.${esig}`, ours: 'MALFORMED', jose: 'rejects' },
      { name: "'*' in the payload", token: `${eh}.*${ep.slice(1)}.${esig}`, ours: 'MALFORMED', jose: 'rejects' },
      { name: "'+' in the signature", token: `${eh}.${ep}.+${esig.slice(1)}`, ours: 'MALFORMED', jose: 'rejects' },
    );

    // Stricter than jose, on purpose (see src/tokens/verify.ts).
    const edKid = activeKid(keys, 'EdDSA');
    list.push(
      // RFC 7515 §2: base64url without padding; jose tolerates '='.
      { name: "'=' padding on the signature", token: `${es}==`, ours: 'MALFORMED', jose: 'accepts' },
      { name: 'no exp', token: tokenFor(keys, edKid, { sub: 'x' }), ours: 'MALFORMED', jose: 'accepts' },
      { name: 'iat in the future', token: tokenFor(keys, edKid, { ...claims, iat: NOW + 60 }), ours: 'NOT_YET_VALID', jose: 'accepts' },
      {
        name: 'jku header',
        token: tokenFor(keys, edKid, claims, { jku: 'https://attacker.invalid/jwks.json' }),
        ours: 'UNSUPPORTED_HEADER',
        jose: 'accepts',
      },
      {
        name: 'b64: false without crit',
        token: tokenFor(keys, edKid, claims, { b64: false }),
        ours: 'UNSUPPORTED_HEADER',
        jose: 'accepts',
      },
    );
    return list;
  }

  let all: Case[];
  /** jose's key lookup, bound to kid and alg as ours is: its local JWK Set for the public keys, the secrets by kid. */
  let getKey: jose.JWTVerifyGetKey;
  beforeAll(() => {
    all = cases();
    const jwks = jose.createLocalJWKSet(exportKeys(keys) as jose.JSONWebKeySet);
    const secrets = exportKeys(keys, { includePrivate: true }).keys.filter((k) => k.kty === 'oct');
    getKey = async (header, token) => {
      if (header.alg?.startsWith('HS') !== true) return jwks(header, token);
      const secret = secrets.find((k) => k.kid === header.kid && k.alg === header.alg);
      if (secret === undefined) throw new jose.errors.JWKSNoMatchingKey();
      return Buffer.from(secret.k as string, 'base64url');
    };
  });

  async function joseVerdict(c: Case): Promise<'rejects' | 'accepts'> {
    try {
      await jose.jwtVerify(c.token, getKey, {
        algorithms: [...ALGORITHMS],
        currentDate: new Date(NOW * 1000),
        clockTolerance: TOLERANCE,
        ...(c.audience === undefined ? {} : { audience: c.audience }),
        ...(c.issuer === undefined ? {} : { issuer: c.issuer }),
      });
      return 'accepts';
    } catch (err) {
      expect(err).toBeInstanceOf(jose.errors.JOSEError);
      return 'rejects';
    }
  }

  it('the case list covers every algorithm and most reasons', () => {
    const reasons = new Set(all.map((c) => c.ours));
    for (const reason of [
      'MALFORMED',
      'BAD_SIGNATURE',
      'ALGORITHM_NOT_ALLOWED',
      'UNKNOWN_KEY',
      'EXPIRED',
      'NOT_YET_VALID',
      'AUDIENCE_MISMATCH',
      'ISSUER_MISMATCH',
      'UNSUPPORTED_HEADER',
    ]) {
      expect(reasons).toContain(reason);
    }
    expect(all.filter((c) => c.jose === 'rejects').length).toBeGreaterThan(100);
  });

  it('each case: jose and we give the verdicts expected', async () => {
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE, clockToleranceSeconds: TOLERANCE, clock: () => NOW });
    const mismatches: string[] = [];
    for (const c of all) {
      const joseSays = await joseVerdict(c);
      const result = verifier.verify(c.token, { audience: c.audience, issuer: c.issuer } as { audience?: string; issuer?: string });
      const oursSays = result.valid ? 'valid' : result.reason;
      if (joseSays === 'rejects' && result.valid) mismatches.push(`${c.name}: jose rejects, we accept`);
      if (joseSays !== c.jose) mismatches.push(`${c.name}: jose ${joseSays}, expected ${c.jose}`);
      if (oursSays !== c.ours) mismatches.push(`${c.name}: we say ${oursSays}, expected ${c.ours}`);
    }
    expect(mismatches).toEqual([]);
  });
});
