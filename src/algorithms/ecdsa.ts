import { Buffer } from 'node:buffer';
import { sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { asymmetricJwk, generatePair } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/**
 * ECDSA signatures in JWS are the raw r||s form ([RFC 7518 §3.4](https://www.rfc-editor.org/rfc/rfc7518#section-3.4));
 * OpenSSL speaks DER. We sign and verify in DER with the bare KeyObject and convert here,
 * in JavaScript: on Node 24 the raw form, or any options object, takes a slower path (bench/PERFORMANCE.md,
 * "ECDSA: DER from a bare KeyObject").
 */

/** JWK curve names and OpenSSL's, with the coordinate size of each. */
const CURVES = {
  'P-256': { openssl: 'prime256v1', coordinateBytes: 32 },
  'P-384': { openssl: 'secp384r1', coordinateBytes: 48 },
} as const;

/**
 * DER `SEQUENCE { INTEGER r, INTEGER s }` to the fixed-width JWS form, written into `out`
 * (its first `2 * coordinateBytes` bytes; a fresh buffer when not given), which is returned.
 */
export function derToJose(der: Buffer, coordinateBytes: number, out: Buffer = Buffer.allocUnsafe(coordinateBytes * 2)): Buffer {
  // SEQUENCE header: 0x30 and a one-byte length (at most 102 bytes for P-384); the 0x81
  // long form is handled anyway so a curve with longer signatures cannot misparse.
  let offset = der[1] === 0x81 ? 3 : 2;
  for (let part = 0; part < 2; part++) {
    const length = der[offset + 1] as number;
    let start = offset + 2;
    let size = length;
    // DER integers carry a leading 0x00 when the high bit is set; JWS does not.
    while (size > coordinateBytes && der[start] === 0) {
      start++;
      size--;
    }
    // `out` is not zero-filled (node:buffer's pool, or a closure's scratch): each half's leading zeros are written here.
    out.fill(0, part * coordinateBytes, part * coordinateBytes + (coordinateBytes - size));
    der.copy(out, part * coordinateBytes + (coordinateBytes - size), start, start + size);
    offset += 2 + length;
  }
  return out;
}

/**
 * A verifying closure's DER output: one buffer for the longest signature of the curve, and a
 * view of each length a signature takes (node:crypto reads a view's bytes, all of them).
 * Filled and read within one synchronous verify, so one closure needs one.
 */
export class DerScratch {
  readonly #bytes: Buffer;
  readonly #views: Buffer[] = [];

  constructor(coordinateBytes: number) {
    // SEQUENCE header (at most 3) and two INTEGERs of at most 2 + 1 + coordinateBytes.
    this.#bytes = Buffer.allocUnsafeSlow(2 * coordinateBytes + 9);
  }

  /** The first `length` bytes, as one view made once per length. */
  take(length: number): Buffer {
    let view = this.#views[length];
    if (view === undefined) {
      view = this.#bytes.subarray(0, length);
      this.#views[length] = view;
    }
    return view;
  }
}

/** Where one half's minimal DER INTEGER content starts in `raw`, and whether it needs a 0x00 (its high bit set). */
function integerStart(raw: Buffer, start: number, coordinateBytes: number): { first: number; pad: number } {
  let first = start;
  const end = start + coordinateBytes;
  while (first < end - 1 && raw[first] === 0) first++;
  return { first, pad: (raw[first] as number) >= 0x80 ? 1 : 0 };
}

/** Writes `INTEGER` of raw[first, end) at `at` in `out`; returns where it ends. */
function writeInteger(out: Buffer, at: number, raw: Buffer, first: number, pad: number, end: number): number {
  out[at] = 0x02;
  out[at + 1] = pad + end - first;
  if (pad === 1) out[at + 2] = 0;
  raw.copy(out, at + 2 + pad, first, end);
  return at + 2 + pad + end - first;
}

/**
 * The fixed-width JWS form to DER, in one allocation or in `scratch`; the caller has checked
 * `raw` holds `2 * coordinateBytes` bytes (only those are read).
 */
export function joseToDer(raw: Buffer, coordinateBytes: number, scratch?: DerScratch): Buffer {
  const r = integerStart(raw, 0, coordinateBytes);
  const s = integerStart(raw, coordinateBytes, coordinateBytes);
  const body = 4 + r.pad + coordinateBytes - r.first + s.pad + 2 * coordinateBytes - s.first;
  const headerBytes = body >= 0x80 ? 3 : 2;
  const out = scratch === undefined ? Buffer.allocUnsafe(headerBytes + body) : scratch.take(headerBytes + body);
  out[0] = 0x30;
  if (headerBytes === 3) out[1] = 0x81;
  out[headerBytes - 1] = body;
  writeInteger(out, writeInteger(out, headerBytes, raw, r.first, r.pad, coordinateBytes), raw, s.first, s.pad, 2 * coordinateBytes);
  return out;
}

/** True when r or s is zero: never a valid signature (the "psychic signature" class, CVE-2022-21449). */
export function hasZeroComponent(raw: Buffer, coordinateBytes: number): boolean {
  let r = 0;
  let s = 0;
  for (let i = 0; i < coordinateBytes; i++) {
    r |= raw[i] as number;
    s |= raw[coordinateBytes + i] as number;
  }
  return r === 0 || s === 0;
}

/** ES256/ES384 (RFC 7518 §3.4): ECDSA on `curve` with `hash`, signatures in the JWS raw form. */
export function ecdsa(hash: string, curve: keyof typeof CURVES): AlgorithmSpec {
  const { openssl, coordinateBytes: size } = CURVES[curve];
  return {
    symmetric: false,
    // The bare KeyObject signs in DER by default: the fast path. Each closure converts in
    // buffers of its own, filled and read before it returns: no allocation per call but
    // node:crypto's own.
    prepareSign: (key) => {
      const jose = Buffer.allocUnsafeSlow(2 * size);
      return (input) => derToJose(cryptoSign(hash, input, key), size, jose).toString('base64url');
    },
    prepareVerify: (key) => {
      // Room past the JWS form: a longer signature decodes to more than 2 * size bytes, not to a cut-off 2 * size.
      const raw = Buffer.allocUnsafeSlow(2 * size + 3);
      const der = new DerScratch(size);
      return (input, signature) => {
        // Decoded as Buffer.from(signature, 'base64url') decodes it, into `raw`.
        const length = raw.write(signature, 'base64url');
        // Only the JWS raw form is accepted: a DER signature has another length.
        return length === size * 2 && !hasZeroComponent(raw, size) && cryptoVerify(hash, input, key, joseToDer(raw, size, der));
      };
    },
    checkKey: (key) =>
      key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === openssl ? undefined : `needs an EC key on ${curve}`,
    // OpenSSL refuses a point off the curve on import; a private key's match is the signing probe's.
    checkStrength: () => undefined,
    checkPrivate: () => undefined,
    async generate() {
      const { privateKey, publicKey } = await generatePair('ec', { namedCurve: openssl });
      return { signingKey: privateKey, verificationKey: publicKey };
    },
    ...asymmetricJwk,
  };
}
