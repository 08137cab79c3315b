/**
 * The DER <-> JWS raw (r||s) conversion of src/algorithms/ecdsa.ts, against node:crypto's own
 * 'der' and 'ieee-p1363' encodings and against an independent DER encoder built on BigInt.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DerScratch, derToJose, hasZeroComponent, joseToDer } from '../../src/algorithms/ecdsa.js';
import { ALGORITHM_SPECS } from '../../src/algorithms/index.js';

const CURVES = [
  { name: 'P-256', nodeCurve: 'prime256v1', hash: 'sha256', size: 32, alg: 'ES256' },
  { name: 'P-384', nodeCurve: 'secp384r1', hash: 'sha384', size: 48, alg: 'ES384' },
] as const;

const SIGNATURES = 200;

/** Minimal DER INTEGER of a non-negative value. */
function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  let bytes = Buffer.from(hex, 'hex');
  if ((bytes[0] as number) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/** DER `SEQUENCE { INTEGER r, INTEGER s }`, short or long length form. */
function derSignature(r: bigint, s: bigint): Buffer {
  const body = Buffer.concat([derInteger(r), derInteger(s)]);
  const header = body.length < 0x80 ? Buffer.from([0x30, body.length]) : Buffer.from([0x30, 0x81, body.length]);
  return Buffer.concat([header, body]);
}

function rawSignature(r: bigint, s: bigint, size: number): Buffer {
  const half = (v: bigint) => Buffer.from(v.toString(16).padStart(size * 2, '0'), 'hex');
  return Buffer.concat([half(r), half(s)]);
}

function splitRaw(raw: Buffer, size: number): [bigint, bigint] {
  const big = (b: Buffer) => BigInt('0x' + (b.length === 0 ? '0' : b.toString('hex')));
  return [big(raw.subarray(0, size)), big(raw.subarray(size))];
}

describe.each(CURVES)('$name', ({ nodeCurve, hash, size, alg }) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: nodeCurve });

  it(`${SIGNATURES} node:crypto signatures convert both ways and still verify`, () => {
    let highBit = 0;
    for (let i = 0; i < SIGNATURES; i++) {
      const data = Buffer.from(`message ${i}`);

      // DER from node -> raw: node verifies it as ieee-p1363, and it maps back to the same DER bytes.
      const der = sign(hash, data, { key: privateKey, dsaEncoding: 'der' });
      const fromDer = derToJose(der, size);
      expect(fromDer.length).toBe(size * 2);
      expect(verify(hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, fromDer)).toBe(true);
      expect(joseToDer(fromDer, size).equals(der)).toBe(true);
      const [r1, s1] = splitRaw(fromDer, size);
      expect(derSignature(r1, s1).equals(der)).toBe(true);

      // Raw from node (ieee-p1363) -> DER: node verifies it as DER, the independent encoder agrees, and it maps back.
      const raw = sign(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      expect(raw.length).toBe(size * 2);
      const toDer = joseToDer(raw, size);
      expect(verify(hash, data, { key: publicKey, dsaEncoding: 'der' }, toDer)).toBe(true);
      const [r2, s2] = splitRaw(raw, size);
      expect(toDer.equals(derSignature(r2, s2))).toBe(true);
      expect(derToJose(toDer, size).equals(raw)).toBe(true);

      if ((raw[0] as number) >= 0x80 || (raw[size] as number) >= 0x80) highBit++;
    }
    // Both shapes were exercised: r or s with the high bit set (DER adds a 0x00) in about
    // three signatures of four, neither in the rest. A leading zero byte (1 in 128) is left
    // to the edge cases below, which do not depend on chance.
    expect(highBit).toBeGreaterThan(SIGNATURES / 4);
    expect(highBit).toBeLessThan(SIGNATURES);
  });

  const max = (1n << BigInt(8 * size)) - 1n;
  const top = 1n << BigInt(8 * size - 1);
  const cases: Array<[string, bigint, bigint]> = [
    ['r = s = 1', 1n, 1n],
    ['one byte below and at the high bit', 0x7fn, 0x80n],
    ['all bits set', max, max],
    ['only the top bit', top, top],
    ['just below the top bit', top - 1n, top - 1n],
    ['one leading zero byte, then a high bit', max >> 8n, (max >> 8n) - 5n],
    ['one leading zero byte, then no high bit', max >> 9n, 1n << BigInt(8 * size - 16)],
    ['two leading zero bytes', max >> 16n, max >> 17n],
    ['r short, s full with high bit', 0x0100n, max - 1n],
    ['r = 0', 0n, 42n],
    ['r = s = 0', 0n, 0n],
  ];

  it.each(cases)('edge case: %s', (_name, r, s) => {
    const raw = rawSignature(r, s, size);
    const der = derSignature(r, s);
    expect(joseToDer(raw, size).toString('hex')).toBe(der.toString('hex'));
    expect(derToJose(der, size).toString('hex')).toBe(raw.toString('hex'));
  });

  it('into scratch buffers, every edge case converts as with fresh ones, whatever was converted before', () => {
    // One scratch for all the cases, in an order that runs long, short and long again: each
    // conversion must rewrite every byte it returns (leading zeros included) and return a view
    // of exactly its own length.
    const scratch = new DerScratch(size);
    const jose = Buffer.alloc(2 * size, 0xee);
    for (const [, r, s] of [...cases, ...[...cases].reverse()]) {
      const raw = rawSignature(r, s, size);
      const der = derSignature(r, s);
      const viaScratch = joseToDer(raw, size, scratch);
      expect(viaScratch.toString('hex')).toBe(der.toString('hex'));
      expect(derToJose(der, size, jose)).toBe(jose);
      expect(jose.toString('hex')).toBe(raw.toString('hex'));
    }
    // A view per length, made once: the same length gives the same view back.
    expect(scratch.take(2 * size + 8)).toBe(scratch.take(2 * size + 8));
  });

  it("the spec's closures sign and verify through their scratch, one call after another, and refuse every other length", () => {
    const spec = ALGORITHM_SPECS[alg];
    const signInput = spec.prepareSign(privateKey);
    const check = spec.prepareVerify(publicKey);
    const signatures = Array.from({ length: 40 }, (_, i) => {
      const data = Buffer.from(`token ${i}`);
      return { data, signature: signInput(data) };
    });
    // Verified after all were made: nothing a later call wrote changed an earlier result.
    for (const { data, signature } of signatures) {
      expect(check(data, signature)).toBe(true);
      expect(verify(hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))).toBe(true);
      expect(check(Buffer.from('another message'), signature)).toBe(false);
    }
    const { data, signature } = signatures[0] as { data: Buffer; signature: string };
    const bytes = Buffer.from(signature, 'base64url');
    // One to three bytes more (room the scratch has), many more, one less: not the JWS form.
    for (const extra of [1, 2, 3, 4, 100]) {
      expect(check(data, Buffer.concat([bytes, Buffer.alloc(extra, 1)]).toString('base64url'))).toBe(false);
    }
    expect(check(data, bytes.subarray(1).toString('base64url'))).toBe(false);
    expect(check(data, sign(hash, data, privateKey).toString('base64url'))).toBe(false); // DER
    expect(check(data, '')).toBe(false);
    // And the right one still passes after the refusals.
    expect(check(data, signature)).toBe(true);
  });

  it('hasZeroComponent flags r = 0 or s = 0 only', () => {
    expect(hasZeroComponent(rawSignature(0n, 0n, size), size)).toBe(true);
    expect(hasZeroComponent(rawSignature(0n, max, size), size)).toBe(true);
    expect(hasZeroComponent(rawSignature(max, 0n, size), size)).toBe(true);
    expect(hasZeroComponent(rawSignature(1n, 1n, size), size)).toBe(false);
    expect(hasZeroComponent(rawSignature(top, 1n << 8n, size), size)).toBe(false);
  });
});
