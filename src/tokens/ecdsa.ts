/**
 * ECDSA signatures in JWS are the raw r||s form (RFC 7518 §3.4); OpenSSL speaks DER.
 * On Node 24 (OpenSSL 3.5) asking node:crypto for the raw form ('ieee-p1363') costs about
 * twice as much as DER (sign ~40 us vs ~20 us), and so does passing any options object,
 * even `{ key, dsaEncoding: 'der' }`: only the bare KeyObject (DER by default) takes the
 * fast path (verify ~60 us vs ~85 us). So we sign and verify in DER with the bare key and
 * convert in JavaScript, as fast-jwt does.
 */

/** DER `SEQUENCE { INTEGER r, INTEGER s }` to the fixed-width JWS form. */
export function derToJose(der: Buffer, coordinateBytes: number): Buffer {
  // SEQUENCE header: 0x30 and a one-byte length (at most 102 bytes for P-384); the 0x81
  // long form is handled anyway so a curve with longer signatures cannot misparse.
  let offset = der[1] === 0x81 ? 3 : 2;
  const out = Buffer.alloc(coordinateBytes * 2);
  for (let part = 0; part < 2; part++) {
    const length = der[offset + 1] as number;
    let start = offset + 2;
    let size = length;
    // DER integers carry a leading 0x00 when the high bit is set; JWS does not.
    while (size > coordinateBytes && der[start] === 0) {
      start++;
      size--;
    }
    der.copy(out, part * coordinateBytes + (coordinateBytes - size), start, start + size);
    offset += 2 + length;
  }
  return out;
}

function derInteger(raw: Buffer, start: number, coordinateBytes: number): Buffer {
  let first = start;
  const end = start + coordinateBytes;
  while (first < end - 1 && raw[first] === 0) first++;
  const pad = (raw[first] as number) >= 0x80 ? 1 : 0;
  const out = Buffer.alloc(2 + pad + end - first);
  out[0] = 0x02;
  out[1] = pad + end - first;
  raw.copy(out, 2 + pad, first, end);
  return out;
}

/** The fixed-width JWS form to DER; the caller has checked `raw.length === 2 * coordinateBytes`. */
export function joseToDer(raw: Buffer, coordinateBytes: number): Buffer {
  const r = derInteger(raw, 0, coordinateBytes);
  const s = derInteger(raw, coordinateBytes, coordinateBytes);
  const body = r.length + s.length;
  const header = body >= 0x80 ? Buffer.from([0x30, 0x81, body]) : Buffer.from([0x30, body]);
  return Buffer.concat([header, r, s], header.length + body);
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
