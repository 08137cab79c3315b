/**
 * The Status List of the IETF Token Status List, draft-ietf-oauth-status-list-20
 * (https://datatracker.ietf.org/doc/html/draft-ietf-oauth-status-list-20), section 4:
 * a byte array of `bits`-wide entries packed from the least significant bit of each byte,
 * compressed with DEFLATE (RFC 1951) in the ZLIB format (RFC 1950), base64url in `lst`.
 */
import { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../../base/errors.js';
import { nodeZlib } from '../../base/optional-deps.js';

/** The widths section 4.1 allows per Referenced Token. */
export type StatusBits = 1 | 2 | 4 | 8;

/** The JSON Status List of section 4.2: what a Status List Token's `status_list` claim holds. */
export interface StatusListJson {
  readonly bits: StatusBits;
  readonly lst: string;
}

/** Whether `value` is one of the widths section 4.1 allows. @internal */
export function isStatusBits(value: unknown): value is StatusBits {
  return value === 1 || value === 2 || value === 4 || value === 8;
}

/**
 * `lst` of a byte array: ZLIB at the highest level, as section 4.1 step 4 recommends
 * (its test vectors are made at that level: they start 78 da). @internal
 */
export function encodeLst(bytes: Uint8Array): string {
  const zlib = nodeZlib();
  return zlib.deflateSync(bytes, { level: zlib.constants.Z_BEST_COMPRESSION }).toString('base64url');
}

/**
 * The byte array of an `lst`, refusing one that inflates past `maxBytes`: a list is
 * fetched from the network, and a ZLIB bomb must cost a bounded amount of memory.
 * @throws JwtGrpcError `ERR_INVALID_ARGUMENT` when `lst` is not base64url; zlib's Error when it is
 * not ZLIB data or inflates past `maxBytes`. @internal
 */
export function decodeLst(lst: string, maxBytes: number): Buffer {
  if (typeof lst !== 'string' || !/^[A-Za-z0-9_-]*$/.test(lst)) throw new JwtGrpcError('ERR_INVALID_ARGUMENT', 'lst is not base64url');
  return nodeZlib().inflateSync(Buffer.from(lst, 'base64url'), { maxOutputLength: maxBytes });
}

/**
 * The status of entry `idx` of `bytes` with `bits` per entry (section 4.1 step 3), or
 * undefined when `idx` is out of bounds: section 8.3 step 6 then rejects the token. @internal
 */
export function statusAt(bytes: Uint8Array, bits: StatusBits, idx: number): number | undefined {
  const perByte = 8 / bits;
  const byte = bytes[Math.floor(idx / perByte)];
  if (byte === undefined || !Number.isSafeInteger(idx) || idx < 0) return undefined;
  const shift = (idx % perByte) * bits;
  return (byte >> shift) & ((1 << bits) - 1);
}

/** Writes `status` into entry `idx` (in bounds; `status` fits `bits`). @internal */
export function setStatusAt(bytes: Uint8Array, bits: StatusBits, idx: number, status: number): void {
  const perByte = 8 / bits;
  const at = Math.floor(idx / perByte);
  const shift = (idx % perByte) * bits;
  const mask = ((1 << bits) - 1) << shift;
  bytes[at] = ((bytes[at] as number) & ~mask) | ((status << shift) & mask);
}
