/** The BigInt arithmetic behind the load-time key checks (src/algorithms/bigint.ts). */
import { describe, expect, it } from 'vitest';
import { bigIntFromBase64url, bigIntFromLittleEndian, gcd, modPow } from '../../src/algorithms/bigint.js';

describe('bigint helpers', () => {
  it('reads base64url as big-endian and bytes as little-endian; nothing is zero', () => {
    expect(bigIntFromBase64url('AQAB')).toBe(65537n);
    expect(bigIntFromBase64url('')).toBe(0n);
    expect(bigIntFromLittleEndian(Buffer.from([0x01, 0x00, 0x01]))).toBe(65537n);
    expect(bigIntFromLittleEndian(Buffer.from([0x00, 0x01]))).toBe(256n);
    expect(bigIntFromLittleEndian(Buffer.alloc(0))).toBe(0n);
  });

  it('does not reverse the caller’s buffer', () => {
    const bytes = Buffer.from([1, 2, 3]);
    bigIntFromLittleEndian(bytes);
    expect([...bytes]).toEqual([1, 2, 3]);
  });

  it('computes modular powers and greatest common divisors', () => {
    expect(modPow(4n, 13n, 497n)).toBe(445n);
    expect(modPow(2n, 0n, 7n)).toBe(1n);
    expect(modPow(10n, 1n, 7n)).toBe(3n);
    // Fermat: a^(p-1) = 1 mod p for a prime p.
    const p = 2n ** 127n - 1n;
    expect(modPow(3n, p - 1n, p)).toBe(1n);
    expect(gcd(12n, 18n)).toBe(6n);
    expect(gcd(17n, 5n)).toBe(1n);
    expect(gcd(0n, 9n)).toBe(9n);
  });
});
