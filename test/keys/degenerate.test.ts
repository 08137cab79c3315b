/**
 * Degenerate keys are refused at import, with one line naming the kid and the reason and
 * never the material: RSA public exponents that are even, below 65537 or 256 bits long;
 * the small-order Ed25519 points and every non-canonical encoding; private and public
 * halves that do not belong together (RSA, EC, Ed25519, JWK and PEM); key members that are
 * not canonical base64url. Each case is a crafted key; the first shows that the RSA e=1 key
 * is a real forgery vector (node:crypto verifies a signature made with no private key).
 */
import { type KeyObject, createPublicKey, generateKeyPairSync, randomBytes, verify as cryptoVerify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JwtGrpcError, exportKeys, generateKeys, importKeys, loadKeys, silentLogger } from '../../src/lib/index.js';
import { forgeRsaE1, rsaJwkWithExponent } from './degenerate-helpers.js';

type Jwk = Record<string, unknown>;

let rsa: Jwk;
let rsaOther: Jwk;
let ec: Jwk;
let ecOther: Jwk;
let ed: Jwk;
let edOther: Jwk;
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-degenerate-'));

beforeAll(() => {
  const jwk = (key: KeyObject): Jwk => ({ ...key.export({ format: 'jwk' }) });
  rsa = jwk(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
  rsaOther = jwk(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
  ec = jwk(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
  ecOther = jwk(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
  ed = jwk(generateKeyPairSync('ed25519').privateKey);
  edOther = jwk(generateKeyPairSync('ed25519').privateKey);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error importKeys throws for one entry, checked to be one ERR_INVALID_KEY line naming `kid`. */
function refusal(entry: Jwk, kid = String(entry['kid'])): string {
  let error: unknown;
  try {
    importKeys({ keys: [entry] });
  } catch (err) {
    error = err;
  }
  expect(error, `${kid} was imported`).toBeInstanceOf(JwtGrpcError);
  const { code, message, field } = error as JwtGrpcError;
  expect(code).toBe('ERR_INVALID_KEY');
  expect(field).toBe(kid);
  expect(message.startsWith(`keys[0] (kid "${kid}"): `), message).toBe(true);
  expect(message).not.toMatch(/\n/);
  for (const member of ['n', 'd', 'p', 'q', 'k', 'x', 'y']) {
    const value = entry[member];
    if (typeof value === 'string' && value.length >= 8) expect(message).not.toContain(value);
  }
  return message;
}

const publicOf = ({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }: Jwk): Jwk => rest;

describe('RSA public exponents', () => {
  it('the e=1 key is a forgery vector: node:crypto verifies a signature made without a private key', () => {
    const key = createPublicKey({ key: rsaJwkWithExponent(String(rsa['n']), 1n) as never, format: 'jwk' });
    const input = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyb290Iiwicm9sZSI6ImFkbWluIn0';
    expect(cryptoVerify('sha256', Buffer.from(input), key, forgeRsaE1(input, 256))).toBe(true);
  });

  it.each([
    [1n, /public exponent 1 is below 65537/],
    [2n, /public exponent 2 is below 65537/],
    [3n, /public exponent 3 is below 65537/],
    [65535n, /public exponent 65535 is below 65537/],
    [65538n, /public exponent is even/],
    [(1n << 256n) + 1n, /public exponent is 256 bits or longer/],
  ])('refuses a public key with e = %s', (e, reason) => {
    const message = refusal({ ...rsaJwkWithExponent(String(rsa['n']), e), kid: `rs-e${e}`, alg: 'RS256' });
    expect(message).toMatch(new RegExp(`^keys\\[0\\] \\(kid "rs-e${e}"\\): RS256 ${reason.source}$`));
    expect(refusal({ ...rsaJwkWithExponent(String(rsa['n']), e), kid: 'ps', alg: 'PS256' })).toMatch(reason);
  });

  it('refuses a private key with e = 3, in a JWK and in a PEM', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 });
    expect(refusal({ ...privateKey.export({ format: 'jwk' }), kid: 'rs-e3', alg: 'RS256' })).toMatch(/public exponent 3 is below 65537/);
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(refusal({ kid: 'rs-e3-pem', alg: 'RS256', pem })).toMatch(/public exponent 3 is below 65537/);
  });

  it('accepts 65537 and larger odd exponents', () => {
    expect(importKeys({ keys: [{ ...publicOf(rsa), kid: 'ok', alg: 'RS256' }] }).keys).toHaveLength(1);
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65539 });
    expect(importKeys({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'ok', alg: 'RS256' }] }).keys).toHaveLength(1);
  });
});

/** p = 2^255 - 19 and the y of the order-8 points, as in libsodium's blocklist. */
const P = 2n ** 255n - 19n;
const Y8 = BigInt(`0x${Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex').reverse().toString('hex')}`);

/** An Ed25519 public key's 32 bytes: `y` little-endian, with the sign bit of x. */
function edPoint(y: bigint, sign: 0 | 1): string {
  const bytes = Buffer.from(y.toString(16).padStart(64, '0'), 'hex').reverse();
  bytes[31] = (bytes[31] as number) | (sign << 7);
  return bytes.toString('base64url');
}

const okp = (x: string, kid: string): Jwk => ({ kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA' });

describe('Ed25519 points', () => {
  it.each([
    ['the identity (order 1)', 1n, 0],
    ['order 2', P - 1n, 0],
    ['order 4, x even', 0n, 0],
    ['order 4, x odd', 0n, 1],
    ['order 8, +y8, x even', Y8, 0],
    ['order 8, +y8, x odd', Y8, 1],
    ['order 8, -y8, x even', P - Y8, 0],
    ['order 8, -y8, x odd', P - Y8, 1],
    ['the identity with the sign bit set', 1n, 1],
    ['order 2 with the sign bit set', P - 1n, 1],
  ] as const)('refuses %s', (_, y, sign) => {
    expect(refusal(okp(edPoint(y, sign), 'ed-weak'))).toBe('keys[0] (kid "ed-weak"): EdDSA public key is a point of small order');
  });

  it.each([
    ['p (0 again)', P, 0],
    ['p + 1 (the identity again)', P + 1n, 0],
    ['p + 1 with the sign bit', P + 1n, 1],
    ['2^255 - 1', 2n ** 255n - 1n, 0],
  ] as const)('refuses the non-canonical y = %s', (_, y, sign) => {
    expect(refusal(okp(edPoint(y, sign), 'ed-big'))).toBe('keys[0] (kid "ed-big"): EdDSA public key is a non-canonical encoding (y >= p)');
  });

  it('refuses a y with no point on the curve, and the identity as a PEM', () => {
    // y = 2: x^2 = 3 / (4d + 1), which has no square root modulo p.
    const y = 2n;
    expect(refusal(okp(edPoint(y, 0), 'ed-off'))).toBe('keys[0] (kid "ed-off"): EdDSA public key is not a point on Ed25519');
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(edPoint(1n, 0), 'base64url')]);
    const pem = `-----BEGIN PUBLIC KEY-----\n${spki.toString('base64')}\n-----END PUBLIC KEY-----\n`;
    expect(refusal({ kid: 'ed-pem', alg: 'EdDSA', pem })).toBe('keys[0] (kid "ed-pem"): EdDSA public key is a point of small order');
  });

  it('accepts real keys, public and private', () => {
    expect(
      importKeys({
        keys: [
          { ...ed, kid: 'a', alg: 'EdDSA' },
          { ...publicOf(edOther), kid: 'b', alg: 'EdDSA' },
        ],
      }).keys,
    ).toHaveLength(2);
  });
});

describe('halves that do not belong together', () => {
  it.each<[string, () => Jwk, RegExp]>([
    ["RSA: another key's d", () => ({ ...rsa, d: rsaOther['d'] }), /d does not invert e/],
    [
      "RSA: another key's p, q and CRT values",
      () => ({ ...rsa, p: rsaOther['p'], q: rsaOther['q'], dp: rsaOther['dp'], dq: rsaOther['dq'], qi: rsaOther['qi'] }),
      /n is not p\*q/,
    ],
    ["RSA: another key's n", () => ({ ...rsa, n: rsaOther['n'] }), /n is not p\*q/],
    ['RSA: a wrong qi', () => ({ ...rsa, qi: rsa['dp'] }), /CRT values/],
    ["EC: another key's x and y", () => ({ ...ec, x: ecOther['x'], y: ecOther['y'] }), /a probe it signed does not verify/],
    ["Ed25519: another key's x", () => ({ ...ed, x: edOther['x'] }), /"x" differs/],
  ])('refuses %s', (_, entry, reason) => {
    const alg = entry()['kty'] === 'RSA' ? 'RS256' : entry()['kty'] === 'EC' ? 'ES256' : 'EdDSA';
    const message = refusal({ ...entry(), kid: 'mixed', alg });
    expect(message).toMatch(new RegExp(`^keys\\[0\\] \\(kid "mixed"\\): ${alg} private key does not match its public key: `));
    // Our own check names the member at fault; OpenSSL 3.5.9 and later refuse some pairs on
    // import first, and the refusal then says so, under the same kid and code.
    expect(message).toMatch(new RegExp(`${reason.source}|node:crypto refused the pair`));
  });

  it("refuses a mismatched key that only verifies (key_ops) too: it is still the file's key", () => {
    expect(refusal({ ...ec, x: ecOther['x'], y: ecOther['y'], kid: 'mixed-verify', alg: 'ES256', key_ops: ['verify'] })).toMatch(
      /does not match/,
    );
  });

  it("refuses an EC PEM whose embedded public key is another key's", () => {
    // SEC1 ECPrivateKey: the private scalar of one key, the public point [1] of another.
    const der = (jwk: Jwk) => createPublicKey({ key: jwk as never, format: 'jwk' }).export({ format: 'der', type: 'spki' });
    const point = der(publicOf(ecOther)).subarray(-65);
    const d = Buffer.from(String(ec['d']), 'base64url');
    const sec1 = Buffer.concat([Buffer.from('30770201010420', 'hex'), d, Buffer.from('a00a06082a8648ce3d030107a144034200', 'hex'), point]);
    const pem = `-----BEGIN EC PRIVATE KEY-----\n${sec1.toString('base64')}\n-----END EC PRIVATE KEY-----\n`;
    expect(refusal({ kid: 'ec-pem-mixed', alg: 'ES256', pem })).toMatch(/ES256 private key does not match its public key/);
  });

  it('accepts every generated key: the probe passes for each algorithm', async () => {
    const keys = await generateKeys({ algorithms: ['HS256', 'HS384', 'HS512', 'ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'] });
    expect(importKeys(exportKeys(keys, { includePrivate: true })).signingAlgorithms).toHaveLength(8);
  });
});

/** The same base64url text with its last character's unused low bits set: the same bytes to a lax decoder. */
function withTrailingBits(value: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const unused = value.length % 4 === 2 ? 4 : value.length % 4 === 3 ? 2 : 0;
  expect(unused, `${value.length} characters leave no unused bits`).toBeGreaterThan(0);
  const last = alphabet.indexOf(value.at(-1) as string);
  return value.slice(0, -1) + alphabet[last | ((1 << unused) - 1)];
}

describe('base64url that is not canonical', () => {
  const secret = randomBytes(32).toString('base64url');
  const hs = (k: string): Jwk => ({ kty: 'oct', k, kid: 'hs', alg: 'HS256' });

  it.each([
    ['"+"', () => `${secret.slice(0, 10)}+${secret.slice(11)}`],
    ['"/"', () => `${secret.slice(0, 10)}/${secret.slice(11)}`],
    ['padding "="', () => `${secret}=`],
    ['a space', () => `${secret.slice(0, 10)} ${secret.slice(10)}`],
    ['a newline', () => `${secret}\n`],
    ['non-zero trailing bits', () => withTrailingBits(secret)],
  ])('refuses an HS256 k with %s', (_, k) => {
    expect(refusal(hs(k()))).toBe(
      'keys[0] (kid "hs"): "k" is not canonical base64url (no padding, "+", "/", whitespace or stray trailing bits)',
    );
  });

  it.each<[string, () => Jwk, string]>([
    ['x of EC', () => ({ ...publicOf(ec), x: withTrailingBits(String(ec['x'])), alg: 'ES256' }), 'x'],
    ['y of EC', () => ({ ...publicOf(ec), y: `${String(ec['y'])}=`, alg: 'ES256' }), 'y'],
    ['d of EC', () => ({ ...ec, d: withTrailingBits(String(ec['d'])), alg: 'ES256' }), 'd'],
    ['x of Ed25519', () => ({ ...publicOf(ed), x: ` ${String(ed['x'])}`, alg: 'EdDSA' }), 'x'],
    ['n of RSA', () => ({ ...publicOf(rsa), n: withTrailingBits(String(rsa['n'])), alg: 'RS256' }), 'n'],
    ['e of RSA', () => ({ ...publicOf(rsa), e: 'AQAB=', alg: 'RS256' }), 'e'],
    ['d of RSA', () => ({ ...rsa, d: `+${String(rsa['d']).slice(1)}`, alg: 'RS256' }), 'd'],
  ])('refuses %s', (_, entry, member) => {
    const jwk: Jwk = { ...entry(), kid: 'bad-encoding' };
    // Guard against a case that is canonical after all.
    expect(Buffer.from(String(jwk[member]), 'base64url').toString('base64url')).not.toBe(jwk[member]);
    expect(refusal(jwk)).toBe(
      `keys[0] (kid "bad-encoding"): "${member}" is not canonical base64url (no padding, "+", "/", whitespace or stray trailing bits)`,
    );
  });

  it('refuses an RSA integer with a leading zero octet, and a member that is not a string', () => {
    const n = Buffer.concat([Buffer.from([0]), Buffer.from(String(rsa['n']), 'base64url')]).toString('base64url');
    expect(refusal({ ...publicOf(rsa), n, kid: 'rs-zero', alg: 'RS256' })).toBe('keys[0] (kid "rs-zero"): "n" has a leading zero octet');
    expect(refusal({ ...publicOf(ec), x: 42, kid: 'ec-num', alg: 'ES256' })).toBe('keys[0] (kid "ec-num"): "x" must be a base64url string');
  });
});

describe('points off their curve', () => {
  it('refuses a P-256 x and y that are not a point on the curve (node:crypto checks, this test holds it to it)', () => {
    // node:crypto's refusal is about the entry's shape: named by its place alone, as every such error is.
    expect(() => importKeys({ keys: [{ kty: 'EC', crv: 'P-256', x: ec['x'], y: ecOther['y'], kid: 'ec-off', alg: 'ES256' }] })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_KEY', field: 'keys[0]', message: expect.stringMatching(/^keys\[0\]: cannot import: /) }),
    );
  });
});

describe('loadKeys', () => {
  it('refuses a key file holding one degenerate key among good ones, naming its kid', async () => {
    const file = join(dir, 'keys.json');
    const good = { ...ec, kid: 'es-good', alg: 'ES256' };
    writeFileSync(file, JSON.stringify({ keys: [good, { ...rsaJwkWithExponent(String(rsa['n']), 1n), kid: 'rs-e1', alg: 'RS256' }] }), {
      mode: 0o600,
    });
    await expect(loadKeys(file, { logger: silentLogger })).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      message: 'keys[1] (kid "rs-e1"): RS256 public exponent 1 is below 65537',
    });
  });
});
