/**
 * KMS signatures come back in DER; derToJose (src/keys/backends/kms.ts) makes them JWS r||s,
 * checked against node:crypto. One that is not DER is refused with ERR_INVALID_KEY (the key
 * backend then answers UNAVAILABLE naming the key), never turned into a token. (KMS itself:
 * test/keys/kms.integration.test.ts.)
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derToJose } from '../../../src/keys/backends/kms.js';

describe('derToJose', () => {
  it.each([
    ['P-256', 'prime256v1', 'sha256', 32],
    ['P-384', 'secp384r1', 'sha384', 48],
  ] as const)('%s: 50 DER signatures become the JOSE form that verifies', (_name, curve, hash, size) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
    for (let i = 0; i < 50; i++) {
      const data = Buffer.from(`input ${i}`);
      const jose = derToJose(sign(hash, data, { key: privateKey, dsaEncoding: 'der' }), size);
      expect(jose).toHaveLength(2 * size);
      expect(verify(hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jose)).toBe(true);
    }
  });

  it('pads short integers and strips the sign octet', () => {
    // r = 0x01 (one octet), s = 0x00ff.. (a sign octet before a high bit).
    const s = Buffer.concat([Buffer.from([0]), Buffer.alloc(32, 0xff)]);
    const der = Buffer.concat([Buffer.from([0x30, 3 + 2 + s.length, 0x02, 1, 0x01, 0x02, s.length]), s]);
    const jose = derToJose(der, 32);
    expect(jose.subarray(0, 32)).toEqual(Buffer.concat([Buffer.alloc(31), Buffer.from([1])]));
    expect(jose.subarray(32)).toEqual(Buffer.alloc(32, 0xff));
  });

  it.each([
    ['not a SEQUENCE', Buffer.from([0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]), 'ECDSA signature is not a DER SEQUENCE'],
    ['not INTEGERs', Buffer.from([0x30, 0x06, 0x04, 0x01, 0x01, 0x02, 0x01, 0x01]), 'ECDSA signature is not two DER INTEGERs'],
    [
      'an integer too long',
      Buffer.concat([Buffer.from([0x30, 0x25, 0x02, 0x21]), Buffer.alloc(33, 0x7f), Buffer.from([0x02, 0x01, 0x01])]),
      'ECDSA signature integer is too long',
    ],
  ])('refuses %s with ERR_INVALID_KEY', (_what, der, message) => {
    expect(() => derToJose(der, 32)).toThrow(
      expect.objectContaining({ name: 'JwtGrpcError', code: 'ERR_INVALID_KEY', field: 'kms', message }),
    );
  });
});
