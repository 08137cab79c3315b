import { type StatusListJson, encodeLst, setStatusAt, statusAt } from './codec.js';
import { JwtGrpcError } from '../../base/errors.js';

/**
 * Status Type values of draft-ietf-oauth-status-list-20 section 7.1: VALID is the
 * default of every entry (section 13.3: no write at issuance, and an unused index looks
 * like a valid token), INVALID is a revoked token.
 */
export const STATUS_VALID = 0x00;
export const STATUS_INVALID = 0x01;

/**
 * One Status List of fixed size, 1 bit per token (jwt-grpc only revokes: VALID or
 * INVALID), with its encoded form cached and rebuilt only after a change.
 *
 * @example
 * ```ts
 * const list = new StatusList(1 << 20);
 * list.set(42);
 * console.log(list.isSet(42), list.json().lst.length); // true, a few dozen characters
 * ```
 */
export class StatusList {
  /** How many entries: indexes 0 to size - 1. */
  readonly size: number;
  readonly #bytes: Uint8Array;
  #encoded: StatusListJson | undefined;
  /** Bumped by each change that sets a bit: the issuer re-signs when it moves. */
  #version = 0;

  /** `size` entries, a positive multiple of 8 (section 13.4 recommends whole bytes). */
  constructor(size: number) {
    if (!Number.isSafeInteger(size) || size <= 0 || size % 8 !== 0)
      throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `status list size must be a positive multiple of 8, got ${size}`);
    this.size = size;
    this.#bytes = new Uint8Array(size / 8);
  }

  /** Marks entry `idx` INVALID; false when it already was. @throws JwtGrpcError `ERR_INVALID_ARGUMENT` when out of bounds. */
  set(idx: number): boolean {
    if (!Number.isSafeInteger(idx) || idx < 0 || idx >= this.size)
      throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `status list index ${idx} is outside 0..${this.size - 1}`);
    if (statusAt(this.#bytes, 1, idx) === STATUS_INVALID) return false;
    setStatusAt(this.#bytes, 1, idx, STATUS_INVALID);
    this.#encoded = undefined;
    this.#version++;
    return true;
  }

  /** Whether entry `idx` is INVALID. */
  isSet(idx: number): boolean {
    return statusAt(this.#bytes, 1, idx) === STATUS_INVALID;
  }

  /** Changes so far: equal versions mean equal lists. */
  get version(): number {
    return this.#version;
  }

  /** The JSON Status List (section 4.2), compressed once per change. */
  json(): StatusListJson {
    this.#encoded ??= { bits: 1, lst: encodeLst(this.#bytes) };
    return this.#encoded;
  }
}
