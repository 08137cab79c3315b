/**
 * The checks a key passes at import (src/keys/key-checks.ts): canonical base64url members,
 * no degenerate material, halves that belong together; each refusal a KeyRefusedError with
 * its reason, naming the key and the member, never the material.
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALGORITHM_SPECS } from '../../src/algorithms/index.js';
import { KeyRefusedError, checkJwkEncoding, checkKeyMaterial, refusalReason } from '../../src/keys/key-checks.js';
import { JwtGrpcError } from '../../src/lib/index.js';

/** What `fn` threw. */
function thrown(fn: () => void): KeyRefusedError {
  try {
    fn();
  } catch (err) {
    return err as KeyRefusedError;
  }
  throw new Error('nothing was thrown');
}

describe('checkJwkEncoding', () => {
  it('accepts canonical members', () => {
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    expect(() => checkJwkEncoding(jwk as Record<string, unknown>, 'rsa-1')).not.toThrow();
  });

  it.each([
    ['padding', { kty: 'oct', k: 'YWJj=' }, '"k" is not canonical base64url'],
    ['a "+"', { kty: 'oct', k: 'ab+c' }, '"k" is not canonical base64url'],
    ['whitespace', { kty: 'EC', x: 'abc d' }, '"x" is not canonical base64url'],
    ['stray trailing bits', { kty: 'oct', k: 'YWJjZB' }, '"k" is not canonical base64url'],
    ['not a string', { kty: 'EC', y: 5 }, '"y" must be a base64url string'],
    ['an RSA integer with a leading zero', { kty: 'RSA', e: 'AAEAAQ' }, '"e" has a leading zero octet'],
  ])('refuses %s, reason encoding, naming the member and the key', (_what, record, problem) => {
    const err = thrown(() => checkJwkEncoding(record, 'k1', 'keys[3]'));
    expect(err).toBeInstanceOf(KeyRefusedError);
    expect(err).toMatchObject({ code: 'ERR_INVALID_KEY', reason: 'encoding', field: 'k1' });
    expect(err.message).toMatch(new RegExp(`^keys\\[3\\] \\(kid "k1"\\): ${problem.replace(/[()"+]/g, '\\$&')}`));
  });

  it('allows a single zero octet in an RSA member, and a leading zero outside RSA', () => {
    expect(() => checkJwkEncoding({ kty: 'RSA', e: 'AA' }, 'k')).not.toThrow();
    expect(() => checkJwkEncoding({ kty: 'EC', x: 'AAEAAQ' }, 'k')).not.toThrow();
  });

  it('names a fetched key by its kid alone', () => {
    expect(thrown(() => checkJwkEncoding({ kty: 'oct', k: 'a=' }, 'remote')).message).toMatch(/^key "remote": /);
  });
});

describe('checkKeyMaterial', () => {
  const ES256 = ALGORITHM_SPECS.ES256;

  it('accepts a key pair that belongs together, and a public key alone', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const record = privateKey.export({ format: 'jwk' }) as Record<string, unknown>;
    expect(() => checkKeyMaterial('a', 'ES256', ES256, { signingKey: privateKey, verificationKey: publicKey }, record)).not.toThrow();
    expect(() => checkKeyMaterial('a', 'ES256', ES256, { signingKey: undefined, verificationKey: publicKey }, undefined)).not.toThrow();
  });

  it('refuses a public member that differs from the private key’s, reason mismatch', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const record = { ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), x: other.x };
    const err = thrown(() =>
      checkKeyMaterial('a', 'ES256', ES256, { signingKey: privateKey, verificationKey: publicKey }, record, 'keys[0]'),
    );
    expect(err).toMatchObject({
      reason: 'mismatch',
      field: 'a',
      message: 'keys[0] (kid "a"): ES256 private key does not match its public key: "x" differs',
    });
  });

  it('refuses a private key whose probe does not verify with the public key (a PEM, no record)', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const otherPublic = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const err = thrown(() => checkKeyMaterial('a', 'ES256', ES256, { signingKey: privateKey, verificationKey: otherPublic }, undefined));
    expect(err).toMatchObject({
      reason: 'mismatch',
      message: 'key "a": ES256 private key does not match its public key: a probe it signed does not verify',
    });
  });

  it('refuses weak material before anything else, reason weak', () => {
    const weak = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.alloc(32).toString('base64url') }, format: 'jwk' });
    const err = thrown(() =>
      checkKeyMaterial('w', 'EdDSA', ALGORITHM_SPECS.EdDSA, { signingKey: undefined, verificationKey: weak }, undefined),
    );
    expect(err).toMatchObject({ reason: 'weak', code: 'ERR_INVALID_KEY', message: 'key "w": EdDSA public key is a point of small order' });
  });
});

describe('refusalReason', () => {
  it('is the refusal’s reason, or malformed for any other error', () => {
    expect(refusalReason(new KeyRefusedError('weak', 'm', { field: 'k' }))).toBe('weak');
    expect(refusalReason(new JwtGrpcError('ERR_INVALID_KEY', 'm'))).toBe('malformed');
    expect(refusalReason(new Error('m'))).toBe('malformed');
  });
});
