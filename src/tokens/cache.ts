import type { VerifiedToken } from './result.js';

/**
 * A bounded cache of tokens whose signature, header and claim types were verified.
 * Keyed by the whole token, so a hit means the very same signed bytes. Only the
 * time-independent work is cached: the verifier re-checks exp/nbf/iat and aud/iss on
 * every hit, so a cached token is never served past its exp. A cache belongs to one
 * verifier, which belongs to one KeySet: rotating keys means a new verifier and an
 * empty cache.
 */
export class VerificationCache {
  readonly #entries = new Map<string, VerifiedToken>();
  readonly #maxEntries: number;
  /** Lookups that found the token, and those that did not (for metrics). */
  hits = 0;
  misses = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(token: string): VerifiedToken | undefined {
    const verified = this.#entries.get(token);
    if (verified === undefined) this.misses += 1;
    else this.hits += 1;
    return verified;
  }

  /** Stores a verified token; its payload is deep-frozen, since every later hit shares it. */
  set(token: string, verified: VerifiedToken): void {
    deepFreeze(verified.payload);
    if (this.#entries.size >= this.#maxEntries) {
      // FIFO eviction: Map iterates in insertion order, so the first key is the oldest.
      // Cheaper than LRU bookkeeping on every hit, and a hot token is simply re-added.
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(token, verified);
  }

  delete(token: string): void {
    this.#entries.delete(token);
  }
}

/** Freezes nested claim objects too, so no caller can change what the next one is served. */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  for (const member of Object.values(value)) deepFreeze(member);
  Object.freeze(value);
}
