/**
 * Known JWT attacks, built by hand with node:crypto: each must come back
 * `{ valid: false }` with the documented reason, twice in a row (the second time
 * through the verifier's header and token caches).
 */
import { type KeyObject, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ANY_AUDIENCE,
  ALGORITHMS,
  type Algorithm,
  type KeySet,
  type Verifier,
  type VerifyFailureReason,
  type VerifyResult,
  createSigner,
  createVerifier,
  exportKeys,
  generateKeys,
} from '../../src/lib/index.js';
import {
  activeKid,
  b64json,
  b64u,
  expectReason,
  expectValid,
  flipChar,
  makeToken,
  nowSeconds,
  privateJwk,
  publicKeyObject,
  rawSignature,
  signingMaterial,
  tokenFor,
} from './helpers.js';

let keys: KeySet;
/** The same algorithms, other keys: what an attacker holds. */
let strangers: KeySet;
let verifier: Verifier;

beforeAll(async () => {
  [keys, strangers] = await Promise.all([generateKeys(), generateKeys()]);
  verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return { sub: 'mallory@example.com', iat: now, exp: now + 600, ...extra };
}

/** Verifies twice (cold, then with whatever the verifier cached) and checks both outcomes. */
function expectRejected(token: string, reason: VerifyFailureReason, v: Verifier = verifier): VerifyResult {
  const first = v.verify(token);
  expectReason(first, reason);
  expectReason(v.verify(token), reason);
  expectReason(v.verifyUncached(token), reason);
  return first;
}

describe('alg none', () => {
  it.each(['none', 'None', 'NONE', 'nOnE'])('alg %j with an empty signature is ALGORITHM_NOT_ALLOWED', (alg) => {
    const hsKid = activeKid(keys, 'HS256');
    expectRejected(`${b64json({ alg, typ: 'JWT' })}.${b64json(claims())}.`, 'ALGORITHM_NOT_ALLOWED');
    // Naming a real kid changes nothing.
    expectRejected(`${b64json({ alg, typ: 'JWT', kid: hsKid })}.${b64json(claims())}.`, 'ALGORITHM_NOT_ALLOWED');
  });

  it('alg none with a real signature of another algorithm appended is still refused', () => {
    const good = tokenFor(keys, activeKid(keys, 'HS256'), claims());
    const [, p, s] = good.split('.') as [string, string, string];
    expectRejected(`${b64json({ alg: 'none', kid: activeKid(keys, 'HS256') })}.${p}.${s}`, 'ALGORITHM_NOT_ALLOWED');
  });

  it.each([['hs256'], ['Hs256'], ['ES256 '], [''], [null], [42], [['HS256']]])('alg %j is ALGORITHM_NOT_ALLOWED', (alg) => {
    const kid = activeKid(keys, 'HS256');
    const token = makeToken({ alg, kid }, claims(), 'HS256', signingMaterial(keys, kid));
    expectRejected(token, 'ALGORITHM_NOT_ALLOWED');
  });
});

describe('signatures', () => {
  it.each(ALGORITHMS)('%s: an empty signature with the real alg and kid is BAD_SIGNATURE', (alg) => {
    const [h, p] = tokenFor(keys, activeKid(keys, alg), claims()).split('.') as [string, string];
    expectRejected(`${h}.${p}.`, 'BAD_SIGNATURE');
  });

  it.each(ALGORITHMS)('%s: a valid signature by another %s key under our kid is BAD_SIGNATURE', (alg) => {
    const kid = activeKid(keys, alg);
    const foreign = signingMaterial(strangers, activeKid(strangers, alg));
    const token = makeToken({ alg, typ: 'JWT', kid }, claims(), alg, foreign);
    // Positive control: the same token is genuine for the stranger's own verifier once the kid matches.
    const ownKid = activeKid(strangers, alg);
    expectValid(
      createVerifier(strangers, { audience: ANY_AUDIENCE }).verify(makeToken({ alg, typ: 'JWT', kid: ownKid }, claims(), alg, foreign)),
    );
    expectRejected(token, 'BAD_SIGNATURE');
  });

  it.each(ALGORITHMS)('%s: a tampered payload (one claim changed, signature kept) is BAD_SIGNATURE', (alg) => {
    const original = claims({ role: 'user' });
    const token = tokenFor(keys, activeKid(keys, alg), original);
    expectValid(verifier.verify(token));
    const [h, , s] = token.split('.') as [string, string, string];
    expectRejected(`${h}.${b64json({ ...original, role: 'admin' })}.${s}`, 'BAD_SIGNATURE');
  });

  it.each(ALGORITHMS)('%s: a tampered signature (one character flipped) is BAD_SIGNATURE', (alg) => {
    const token = tokenFor(keys, activeKid(keys, alg), claims());
    const dot = token.lastIndexOf('.');
    // The first character of the signature carries the top six bits of its first byte.
    expectRejected(flipChar(token, dot + 1), 'BAD_SIGNATURE');
    // A character in the middle too.
    const middle = dot + Math.floor((token.length - dot) / 2);
    expectRejected(flipChar(token, middle), 'BAD_SIGNATURE');
  });

  it.each(ALGORITHMS)('%s: a signature with extra bytes appended is BAD_SIGNATURE', (alg) => {
    const token = tokenFor(keys, activeKid(keys, alg), claims());
    expectRejected(`${token}AAAA`, 'BAD_SIGNATURE');
  });

  it.each([
    ['ES256', 32],
    ['ES384', 48],
  ] as const)('%s: an all-zero signature (r = s = 0) is BAD_SIGNATURE', (alg, size) => {
    const [h, p] = tokenFor(keys, activeKid(keys, alg), claims()).split('.') as [string, string];
    expectRejected(`${h}.${p}.${b64u(Buffer.alloc(size * 2))}`, 'BAD_SIGNATURE');
  });

  it.each([
    ['ES256', 32],
    ['ES384', 48],
  ] as const)('%s: r = 0 or s = 0 alone, with the other half real, is BAD_SIGNATURE', (alg, size) => {
    const token = tokenFor(keys, activeKid(keys, alg), claims());
    const [h, p, s] = token.split('.') as [string, string, string];
    const raw = Buffer.from(s, 'base64url');
    const zeroR = Buffer.concat([Buffer.alloc(size), raw.subarray(size)]);
    const zeroS = Buffer.concat([raw.subarray(0, size), Buffer.alloc(size)]);
    expectRejected(`${h}.${p}.${b64u(zeroR)}`, 'BAD_SIGNATURE');
    expectRejected(`${h}.${p}.${b64u(zeroS)}`, 'BAD_SIGNATURE');
  });

  it.each([
    ['ES256', 'sha256'],
    ['ES384', 'sha384'],
  ] as const)('%s: a DER signature (node:crypto default) instead of raw r||s is BAD_SIGNATURE', (alg, hash) => {
    const kid = activeKid(keys, alg);
    const input = `${b64json({ alg, typ: 'JWT', kid })}.${b64json(claims())}`;
    const der = cryptoSign(hash, Buffer.from(input), signingMaterial(keys, kid) as KeyObject);
    expect(der[0]).toBe(0x30);
    expectRejected(`${input}.${der.toString('base64url')}`, 'BAD_SIGNATURE');
  });
});

describe('algorithm confusion', () => {
  /** The public key bytes an attacker could use as an HMAC secret. */
  function publicSecrets(alg: Algorithm): Array<[string, Buffer]> {
    const kid = activeKid(keys, alg);
    const pub = publicKeyObject(keys, kid);
    const jwk = exportKeys(keys).keys.find((k) => k.kid === kid);
    const list: Array<[string, Buffer]> = [
      ['SPKI PEM', Buffer.from(pub.export({ type: 'spki', format: 'pem' }))],
      ['SPKI DER', pub.export({ type: 'spki', format: 'der' })],
      ['public JWK JSON', Buffer.from(JSON.stringify(jwk))],
    ];
    if (alg === 'RS256') list.push(['PKCS#1 PEM', Buffer.from(pub.export({ type: 'pkcs1', format: 'pem' }))]);
    return list;
  }

  for (const target of ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'] as const) {
    it(`HS256 keyed with the ${target} public key, under the ${target} kid, is ALGORITHM_NOT_ALLOWED`, () => {
      const kid = activeKid(keys, target);
      for (const [, secret] of publicSecrets(target)) {
        for (const hs of ['HS256', 'HS384', 'HS512'] as const) {
          expectRejected(makeToken({ alg: hs, typ: 'JWT', kid }, claims(), hs, secret), 'ALGORITHM_NOT_ALLOWED');
        }
      }
    });

    it(`HS256 keyed with the ${target} public key, under the HS256 kid, is BAD_SIGNATURE`, () => {
      const kid = activeKid(keys, 'HS256');
      for (const [, secret] of publicSecrets(target)) {
        expectRejected(makeToken({ alg: 'HS256', typ: 'JWT', kid }, claims(), 'HS256', secret), 'BAD_SIGNATURE');
      }
    });
  }

  it('an RS256 token (really signed by our RSA key) presented under the HS256 kid is ALGORITHM_NOT_ALLOWED', () => {
    const rsKid = activeKid(keys, 'RS256');
    const token = makeToken({ alg: 'RS256', typ: 'JWT', kid: activeKid(keys, 'HS256') }, claims(), 'RS256', signingMaterial(keys, rsKid));
    expectRejected(token, 'ALGORITHM_NOT_ALLOWED');
  });

  it('an RS256 signature presented as PS256 under the RS256 kid (and the reverse) is ALGORITHM_NOT_ALLOWED', () => {
    const rsKid = activeKid(keys, 'RS256');
    const psKid = activeKid(keys, 'PS256');
    expectRejected(makeToken({ alg: 'PS256', kid: rsKid }, claims(), 'PS256', signingMaterial(keys, rsKid)), 'ALGORITHM_NOT_ALLOWED');
    expectRejected(makeToken({ alg: 'RS256', kid: psKid }, claims(), 'RS256', signingMaterial(keys, psKid)), 'ALGORITHM_NOT_ALLOWED');
  });

  it('ES384 under the ES256 kid is ALGORITHM_NOT_ALLOWED', () => {
    const token = makeToken(
      { alg: 'ES384', kid: activeKid(keys, 'ES256') },
      claims(),
      'ES384',
      signingMaterial(keys, activeKid(keys, 'ES384')),
    );
    expectRejected(token, 'ALGORITHM_NOT_ALLOWED');
  });
});

describe('kid', () => {
  function withKid(kid: unknown): string {
    const real = activeKid(keys, 'HS256');
    const header = kid === undefined ? { alg: 'HS256', typ: 'JWT' } : { alg: 'HS256', typ: 'JWT', kid };
    return makeToken(header, claims(), 'HS256', signingMaterial(keys, real));
  }

  it.each([
    ['unknown', 'hs256-does-not-exist'],
    ['path traversal', '../../etc/passwd'],
    ['absolute path', '/dev/null'],
    ['a prototype member', '__proto__'],
    ['toString', 'toString'],
    ['empty', ''],
    ['a number', 1],
    ['an object', { kid: 'x' }],
    ['257 characters', 'k'.repeat(257)],
  ])('a kid that is %s is UNKNOWN_KEY', (_what, kid) => {
    expectRejected(withKid(kid), 'UNKNOWN_KEY');
  });

  it('a missing kid is UNKNOWN_KEY, even with a genuine signature', () => {
    expectRejected(withKid(undefined), 'UNKNOWN_KEY');
  });

  it('a 10,000-character kid is UNKNOWN_KEY once the token fits maxTokenLength (MALFORMED by the default 8192 limit)', () => {
    const token = withKid('a'.repeat(10_000));
    expect(token.length).toBeGreaterThan(8192);
    expectRejected(token, 'MALFORMED');
    const roomy = createVerifier(keys, { audience: ANY_AUDIENCE, maxTokenLength: 1 << 20 });
    const result = expectRejected(token, 'UNKNOWN_KEY', roomy);
    if (!result.valid) expect(result.message.length).toBeLessThan(200);
  });
});

describe('headers that carry or point at keys', () => {
  it.each([
    ['jku', 'https://attacker.invalid/jwks.json'],
    ['x5u', 'https://attacker.invalid/cert.pem'],
    ['x5c', ['MIIBszCCAVmgAwIBAgIUQ']],
  ])('%s is UNSUPPORTED_HEADER and nothing is fetched', (name, value) => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const kid = activeKid(keys, 'ES256');
    // Genuinely signed by our key: the header alone is the reason.
    expectRejected(tokenFor(keys, kid, claims(), { [name]: value }), 'UNSUPPORTED_HEADER');
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('an embedded jwk (the attacker key that signed the token) is UNSUPPORTED_HEADER', () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const attacker = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const jwk = { ...attacker.publicKey.export({ format: 'jwk' }), alg: 'ES256' };
    const kid = activeKid(keys, 'ES256');
    expectRejected(makeToken({ alg: 'ES256', kid, jwk }, claims(), 'ES256', attacker.privateKey), 'UNSUPPORTED_HEADER');
    // Even without a kid.
    expectRejected(makeToken({ alg: 'ES256', jwk }, claims(), 'ES256', attacker.privateKey), 'UNSUPPORTED_HEADER');
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('an unknown crit extension is UNSUPPORTED_HEADER', () => {
    const kid = activeKid(keys, 'EdDSA');
    expectRejected(tokenFor(keys, kid, claims(), { crit: ['x-policy'], 'x-policy': 'strict' }), 'UNSUPPORTED_HEADER');
    expectRejected(tokenFor(keys, kid, claims(), { crit: [] }), 'UNSUPPORTED_HEADER');
  });

  it('b64: false is UNSUPPORTED_HEADER, with or without crit', () => {
    const kid = activeKid(keys, 'HS256');
    expectRejected(tokenFor(keys, kid, claims(), { b64: false }), 'UNSUPPORTED_HEADER');
    expectRejected(tokenFor(keys, kid, claims(), { b64: false, crit: ['b64'] }), 'UNSUPPORTED_HEADER');
    // The unencoded-payload form itself (RFC 7797, detached): header..signature over the raw payload.
    const header = b64json({ alg: 'HS256', kid, b64: false, crit: ['b64'] });
    const sig = rawSignature('HS256', signingMaterial(keys, kid), `${header}.${JSON.stringify(claims())}`);
    expectRejected(`${header}..${sig.toString('base64url')}`, 'UNSUPPORTED_HEADER');
  });
});

describe('time', () => {
  const NOW = 1_800_000_000;
  const clocked = (): Verifier => createVerifier(keys, { audience: ANY_AUDIENCE, clockToleranceSeconds: 5, clock: () => NOW });
  const at = (payload: Record<string, unknown>): string => tokenFor(keys, activeKid(keys, 'ES256'), payload);

  it('exp 1 s beyond the tolerance is EXPIRED', () => {
    expectRejected(at({ sub: 'x', exp: NOW - 6 }), 'EXPIRED', clocked());
  });

  it('exp exactly at the tolerance edge is EXPIRED; one second later it is valid', () => {
    // Valid while now < exp + tolerance (RFC 7519 §4.1.4 with leeway), as jose counts.
    expectRejected(at({ sub: 'x', exp: NOW - 5 }), 'EXPIRED', clocked());
    expectValid(clocked().verify(at({ sub: 'x', exp: NOW - 4 })));
    expectValid(clocked().verify(at({ sub: 'x', exp: NOW + 1 })));
  });

  it('with the default tolerance and the real clock, a just-expired token is still rejected after tolerance', () => {
    const now = nowSeconds();
    expectRejected(at({ sub: 'x', exp: now - 60 }), 'EXPIRED');
    expectValid(verifier.verify(at({ sub: 'x', exp: now + 60 })));
  });

  it('nbf beyond the tolerance is NOT_YET_VALID; within it, valid', () => {
    expectRejected(at({ sub: 'x', exp: NOW + 600, nbf: NOW + 6 }), 'NOT_YET_VALID', clocked());
    expectValid(clocked().verify(at({ sub: 'x', exp: NOW + 600, nbf: NOW + 5 })));
    expectValid(clocked().verify(at({ sub: 'x', exp: NOW + 600, nbf: NOW - 100 })));
  });

  it('iat beyond the tolerance in the future is NOT_YET_VALID; within it, valid', () => {
    expectRejected(at({ sub: 'x', exp: NOW + 600, iat: NOW + 6 }), 'NOT_YET_VALID', clocked());
    expectValid(clocked().verify(at({ sub: 'x', exp: NOW + 600, iat: NOW + 5 })));
  });

  it('tolerance 0 is exact', () => {
    const strict = createVerifier(keys, { audience: ANY_AUDIENCE, clockToleranceSeconds: 0, clock: () => NOW });
    expectRejected(at({ sub: 'x', exp: NOW }), 'EXPIRED', strict);
    expectValid(strict.verify(at({ sub: 'x', exp: NOW + 1 })));
    expectRejected(at({ sub: 'x', exp: NOW + 60, nbf: NOW + 1 }), 'NOT_YET_VALID', strict);
  });
});

describe('malformed tokens', () => {
  let good: string;
  let h: string;
  let p: string;
  let s: string;
  beforeAll(() => {
    good = tokenFor(keys, activeKid(keys, 'HS256'), claims());
    [h, p, s] = good.split('.') as [string, string, string];
  });

  it('the unmodified token is valid (control)', () => {
    expectValid(verifier.verify(good));
  });

  it.each([
    ['empty', () => ''],
    ['one segment', () => h],
    ['two segments', () => `${h}.${p}`],
    ['four segments', () => `${good}.${s}`],
    ['empty header', () => `.${p}.${s}`],
    ['only dots', () => '..'],
    ["'+' in the header", () => `+${h.slice(1)}.${p}.${s}`],
    ["'/' in the payload", () => `${h}./${p.slice(1)}.${s}`],
    ["'*' in the signature", () => `${h}.${p}.*${s.slice(1)}`],
    ["'=' padding on the signature", () => `${good}=`],
    ["'=' padding on the header", () => `${h}==.${p}.${s}`],
    ['whitespace', () => ` ${good}`],
    ['a newline', () => `${good}\n`],
    ['header not JSON', () => `${b64u('{alg:HS256}')}.${p}.${s}`],
    ['header a JSON array', () => `${b64json([{ alg: 'HS256' }])}.${p}.${s}`],
    ['header a JSON number', () => `${b64json(42)}.${p}.${s}`],
    ['header JSON null', () => `${b64json(null)}.${p}.${s}`],
    ['header a JSON string', () => `${b64json('HS256')}.${p}.${s}`],
  ])('%s is MALFORMED', (_what, make) => {
    expectRejected(make(), 'MALFORMED');
  });

  it('a token longer than maxTokenLength is MALFORMED', () => {
    const token = tokenFor(keys, activeKid(keys, 'HS256'), claims({ pad: 'x'.repeat(300) }));
    expectValid(verifier.verify(token));
    expectRejected(token, 'MALFORMED', createVerifier(keys, { audience: ANY_AUDIENCE, maxTokenLength: 200 }));
  });

  // Payload text exactly as signed (makeToken takes a string as the raw text).
  it.each([
    ['a JSON array', () => JSON.stringify([claims()])],
    ['a JSON string', () => JSON.stringify('not an object')],
    ['JSON null', () => 'null'],
    ['exp as a string "123"', () => JSON.stringify(claims({ exp: '123' }))],
    ['exp huge (1e400 parses to Infinity)', () => '{"sub":"x","exp":1e400}'],
    ['no exp', () => JSON.stringify({ sub: 'x' })],
    ['nbf as a string', () => JSON.stringify(claims({ nbf: '0' }))],
    ['iat as a boolean', () => JSON.stringify(claims({ iat: true }))],
    ['sub a number', () => JSON.stringify(claims({ sub: 42 }))],
    ['iss an object', () => JSON.stringify(claims({ iss: { name: 'x' } }))],
    ['aud an array with a number', () => JSON.stringify(claims({ aud: ['api', 1] }))],
    ['not JSON', () => 'exp=123'],
    ['empty', () => ''],
  ])('a genuinely signed payload that is %s is MALFORMED', (_what, payload) => {
    const kid = activeKid(keys, 'HS256');
    expectRejected(makeToken({ alg: 'HS256', typ: 'JWT', kid }, payload(), 'HS256', signingMaterial(keys, kid)), 'MALFORMED');
  });

  it('a header that is JSON but has no alg is ALGORITHM_NOT_ALLOWED', () => {
    const kid = activeKid(keys, 'HS256');
    expectRejected(makeToken({ typ: 'JWT', kid }, claims(), 'HS256', signingMaterial(keys, kid)), 'ALGORITHM_NOT_ALLOWED');
  });

  it.each([undefined, null, 42, {}, ['a.b.c']])('a non-string token (%j) is MALFORMED, not a throw', (value) => {
    expectRejected(value as unknown as string, 'MALFORMED');
  });
});

describe('audience and issuer', () => {
  const kid = (): string => activeKid(keys, 'PS256');

  it('aud mismatch is AUDIENCE_MISMATCH; aud absent too', () => {
    const token = tokenFor(keys, kid(), claims({ aud: 'web' }));
    expectReason(verifier.verify(token, { audience: 'api' }), 'AUDIENCE_MISMATCH');
    expectReason(verifier.verify(tokenFor(keys, kid(), claims()), { audience: 'api' }), 'AUDIENCE_MISMATCH');
    // A prefix or substring is not a match.
    expectReason(verifier.verify(tokenFor(keys, kid(), claims({ aud: 'api-internal' })), { audience: 'api' }), 'AUDIENCE_MISMATCH');
    expectReason(verifier.verify(tokenFor(keys, kid(), claims({ aud: ['web', 'apis'] })), { audience: 'api' }), 'AUDIENCE_MISMATCH');
  });

  it('aud equal, or an array containing it, is valid', () => {
    expectValid(verifier.verify(tokenFor(keys, kid(), claims({ aud: 'api' })), { audience: 'api' }));
    expectValid(verifier.verify(tokenFor(keys, kid(), claims({ aud: ['web', 'api'] })), { audience: 'api' }));
  });

  it('iss mismatch or absent is ISSUER_MISMATCH; equal is valid', () => {
    expectReason(verifier.verify(tokenFor(keys, kid(), claims({ iss: 'evil' })), { issuer: 'jwt-grpc' }), 'ISSUER_MISMATCH');
    expectReason(verifier.verify(tokenFor(keys, kid(), claims()), { issuer: 'jwt-grpc' }), 'ISSUER_MISMATCH');
    expectReason(verifier.verify(tokenFor(keys, kid(), claims({ iss: 'JWT-GRPC' })), { issuer: 'jwt-grpc' }), 'ISSUER_MISMATCH');
    expectValid(verifier.verify(tokenFor(keys, kid(), claims({ iss: 'jwt-grpc' })), { issuer: 'jwt-grpc' }));
  });

  it('both asked: both must match', () => {
    const token = tokenFor(keys, kid(), claims({ aud: 'api', iss: 'jwt-grpc' }));
    expectValid(verifier.verify(token, { audience: 'api', issuer: 'jwt-grpc' }));
    expectReason(verifier.verify(token, { audience: 'api', issuer: 'other' }), 'ISSUER_MISMATCH');
    expectReason(verifier.verify(token, { audience: 'other', issuer: 'jwt-grpc' }), 'AUDIENCE_MISMATCH');
  });
});

describe('failure messages carry neither the token nor key material', () => {
  it('for a range of failures', () => {
    const hsKid = activeKid(keys, 'HS256');
    const hsSecret = privateJwk(keys, hsKid).k as string;
    const ecKid = activeKid(keys, 'ES256');
    const ecD = privateJwk(keys, ecKid).d as string;
    const secretText = 'S3CR3T-in-the-payload';
    const good = tokenFor(keys, hsKid, claims({ note: secretText }));
    const [h, p, s] = good.split('.') as [string, string, string];
    const rsaPem = publicKeyObject(keys, activeKid(keys, 'RS256')).export({ type: 'spki', format: 'pem' }) as string;

    const failures: Array<[string, VerifyResult]> = [
      ['bad signature', verifier.verify(`${h}.${p}.${flipChar(s, 0)}`)],
      ['tampered', verifier.verify(`${h}.${b64json({ ...claims(), note: secretText, admin: true })}.${s}`)],
      ['expired', verifier.verify(tokenFor(keys, ecKid, { note: secretText, exp: 1 }))],
      ['malformed payload', verifier.verify(tokenFor(keys, ecKid, { note: secretText, exp: 'never' }))],
      ['four segments', verifier.verify(`${good}.${s}`)],
      ['confusion', verifier.verify(makeToken({ alg: 'HS256', kid: activeKid(keys, 'RS256') }, claims(), 'HS256', Buffer.from(rsaPem)))],
      ['audience', verifier.verify(good, { audience: secretText })],
    ];
    for (const [name, result] of failures) {
      if (result.valid) throw new Error(`${name}: expected a failure`);
      const text = `${result.message} ${JSON.stringify(result)}`;
      for (const forbidden of [good, s, p, hsSecret, ecD, secretText, rsaPem.split('\n')[1] as string]) {
        expect(text, name).not.toContain(forbidden);
      }
    }
  });
});

describe('verify never throws on hostile input', () => {
  it('random and near-miss strings', () => {
    const good = createSigner(keys).sign('ES256', claims()).token;
    const inputs = [
      '.',
      '...',
      'a.b.c',
      `${b64json({ alg: 'ES256', kid: activeKid(keys, 'ES256') })}.${b64u('\u0000')}.${b64u('\u0000')}`,
      `${b64json({ alg: 'ES256', kid: activeKid(keys, 'ES256') })}..`,
      `${b64json({ alg: 'RS256', kid: activeKid(keys, 'RS256') })}.${b64json(claims())}.${b64u(Buffer.alloc(1024, 0xff))}`,
      `${b64json({ alg: 'EdDSA', kid: activeKid(keys, 'EdDSA') })}.${b64json(claims())}.${b64u(Buffer.alloc(63))}`,
      `${b64json({ alg: 'PS256', kid: activeKid(keys, 'PS256') })}.${b64json(claims())}.${b64u(Buffer.alloc(256))}`,
      good.replace(/\./g, ''),
      good.split('').reverse().join(''),
    ];
    for (const input of inputs) {
      let result: VerifyResult | undefined;
      expect(() => {
        result = verifier.verify(input);
      }).not.toThrow();
      expect(result?.valid).toBe(false);
    }
  });
});
