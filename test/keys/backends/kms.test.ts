/**
 * src/keys/backends/kms.ts, the part that runs without AWS: a signature KMS answers that is
 * not DER is refused with ERR_INVALID_KEY (the key backend then answers UNAVAILABLE naming
 * the key), never turned into a token. (KMS itself: test/keys/kms.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { derToJose } from '../../../src/keys/backends/kms.js';

describe('derToJose', () => {
  it('turns SEQUENCE { INTEGER r, INTEGER s } into r||s, each left-padded', () => {
    expect(derToJose(Buffer.from('3006020101020102', 'hex'), 2).toString('hex')).toBe('00010002');
  });

  it.each([
    ['not a SEQUENCE', '3106020101020102', 'ECDSA signature is not a DER SEQUENCE'],
    ['not two INTEGERs', '3006020101030102', 'ECDSA signature is not two DER INTEGERs'],
    ['an integer longer than the curve', '30070203010203020101', 'ECDSA signature integer is too long'],
  ])('refuses %s with ERR_INVALID_KEY', (_, hex, message) => {
    expect(() => derToJose(Buffer.from(hex, 'hex'), 2)).toThrow(expect.objectContaining({ name: 'JwtGrpcError', code: 'ERR_INVALID_KEY', field: 'kms', message }));
  });
});
