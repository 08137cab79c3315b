import type { KeyObject } from 'node:crypto';
import type { Algorithm, AlgorithmSpec } from '../algorithms/index.js';
import { JwtGrpcError } from '../base/errors.js';
import type { KeyHandle } from './backend.js';

/**
 * One imported key as the signing and verification paths need it: KeyObjects made
 * once, never PEM strings or JWKs parsed per call.
 * @internal
 */
export interface KeyEntry {
  readonly kid: string;
  readonly alg: Algorithm;
  /** The algorithm's entry of ALGORITHM_SPECS: how this key signs, verifies and exports. */
  readonly spec: AlgorithmSpec;
  /** Secret (HMAC) or private key; undefined for verify-only keys. */
  readonly signingKey: KeyObject | undefined;
  /** Secret (HMAC) or public key. */
  readonly verificationKey: KeyObject;
  /**
   * A key whose private part stays in an HSM or a KMS: it signs through this handle,
   * asynchronously; `signingKey` is then undefined. Undefined for keys held in memory.
   */
  readonly handle?: KeyHandle | undefined;
  /** The key file member and reference of a key that is a handle, signing or not: what exports and rotation write back. */
  readonly reference?: { readonly member: string; readonly ref: string } | undefined;
  /** When the key file says it stopped signing (`deactivated_at`), in seconds since the epoch. */
  readonly deactivatedAt?: number | undefined;
}

/** A key able to sign, in memory or through a handle: what the active signer of an algorithm always is. @internal */
export type SigningEntry = KeyEntry & ({ readonly signingKey: KeyObject } | { readonly handle: KeyHandle });

/**
 * What a caller may see of a key: never its material.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const infos: readonly KeyInfo[] = keys.keys;
 * for (const { kid, alg, active } of infos) console.log(kid, alg, active ? 'signs' : 'verifies');
 * ```
 */
export interface KeyInfo {
  readonly kid: string;
  readonly alg: Algorithm;
  /** True when this key is the one that signs new tokens of its algorithm. */
  readonly active: boolean;
  /** False for verify-only keys (public JWKs, key_ops without "sign", a deactivated_at). */
  readonly canSign: boolean;
  /** When the key stopped signing (its `deactivated_at`), in seconds since the epoch; undefined when never said. */
  readonly deactivatedAt: number | undefined;
}

function isSigning(entry: KeyEntry): entry is SigningEntry {
  return entry.signingKey !== undefined || entry.handle !== undefined;
}

/** Longest kid accepted, in keys and in token headers. */
export const MAX_KID_LENGTH = 256;

/**
 * An immutable set of keys. Per algorithm, the first key able to sign is the active
 * signer; every key verifies tokens that name its kid. Rotation = a new KeySet with the
 * new key first and the old keys after it, so tokens already issued keep verifying.
 * Made by {@link generateKeys}, {@link loadKeys} or {@link importKeys}.
 *
 * @example
 * ```ts
 * const keys: KeySet = await loadKeys('keys.json');
 * keys.signingAlgorithms;               // ['ES256', 'HS256']
 * keys.keys.map((key) => key.kid);      // kids, never key material
 * console.log(keys);                    // KeySet(ES256:es-2026*, HS256:hs-2026*)
 * ```
 */
export class KeySet {
  readonly #byKid: ReadonlyMap<string, KeyEntry>;
  readonly #active: ReadonlyMap<Algorithm, SigningEntry>;

  /** @internal use generateKeys, loadKeys or importKeys */
  constructor(entries: readonly KeyEntry[]) {
    if (entries.length === 0) throw new JwtGrpcError('ERR_INVALID_KEY', 'a key set needs at least one key');
    const byKid = new Map<string, KeyEntry>();
    const active = new Map<Algorithm, SigningEntry>();
    for (const [index, entry] of entries.entries()) {
      if (byKid.has(entry.kid)) {
        // By position, not value: a kid read from a key file may be a secret pasted into the wrong member.
        const first = entries.findIndex((other) => other.kid === entry.kid);
        throw new JwtGrpcError('ERR_INVALID_KEY', `keys[${index}].kid: the same kid as keys[${first}]`, { field: `keys[${index}].kid` });
      }
      byKid.set(entry.kid, entry);
      if (isSigning(entry) && !active.has(entry.alg)) active.set(entry.alg, entry);
    }
    this.#byKid = byKid;
    this.#active = active;
  }

  /** Every key, in the order given. */
  get keys(): readonly KeyInfo[] {
    return [...this.#byKid.values()].map((entry) => ({
      kid: entry.kid,
      alg: entry.alg,
      active: this.#active.get(entry.alg) === entry,
      canSign: isSigning(entry),
      deactivatedAt: entry.deactivatedAt,
    }));
  }

  /** Algorithms this set can sign with (those with an active key). */
  get signingAlgorithms(): readonly Algorithm[] {
    return [...this.#active.keys()];
  }

  /** @internal the key a token's kid names */
  entry(kid: string): KeyEntry | undefined {
    return this.#byKid.get(kid);
  }

  /** @internal the active signer of an algorithm */
  activeEntry(alg: Algorithm): SigningEntry | undefined {
    return this.#active.get(alg);
  }

  /** @internal every entry, in order */
  entries(): IterableIterator<KeyEntry> {
    return this.#byKid.values();
  }

  /** @internal false when an active signer is a handle whose backend cannot sign now (its circuit breaker opened) */
  get signingReady(): boolean {
    for (const entry of this.#active.values()) if (entry.handle !== undefined && !entry.handle.canSign) return false;
    return true;
  }

  /** @internal the handles (HSM, KMS keys) of this set that sign */
  handles(): KeyHandle[] {
    return [...this.#byKid.values()].flatMap((entry) => (entry.handle === undefined ? [] : [entry.handle]));
  }

  /** Keeps key material out of logs and `util.inspect`. */
  toJSON(): { keys: readonly KeyInfo[] } {
    return { keys: this.keys };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `KeySet(${this.keys.map((k) => `${k.alg}:${k.kid}${k.active ? '*' : ''}`).join(', ')})`;
  }
}
