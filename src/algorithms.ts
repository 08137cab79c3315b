/**
 * The JWS algorithms jwt-grpc signs and verifies, and what each needs from node:crypto.
 * One table, so that keys, signers and verifiers agree on hashes and sizes.
 */
export const ALGORITHMS = ['HS256', 'HS384', 'HS512', 'ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'] as const;

export type Algorithm = (typeof ALGORITHMS)[number];

export type AlgorithmSpec =
  | { readonly family: 'hmac'; readonly hash: string; readonly hashBytes: number }
  | { readonly family: 'ecdsa'; readonly hash: string; readonly curve: 'P-256' | 'P-384'; readonly coordinateBytes: number }
  | { readonly family: 'rsa' | 'rsa-pss'; readonly hash: string; readonly hashBytes: number }
  | { readonly family: 'eddsa'; readonly curve: 'Ed25519' };

export const ALGORITHM_SPECS: Readonly<Record<Algorithm, AlgorithmSpec>> = {
  HS256: { family: 'hmac', hash: 'sha256', hashBytes: 32 },
  HS384: { family: 'hmac', hash: 'sha384', hashBytes: 48 },
  HS512: { family: 'hmac', hash: 'sha512', hashBytes: 64 },
  ES256: { family: 'ecdsa', hash: 'sha256', curve: 'P-256', coordinateBytes: 32 },
  ES384: { family: 'ecdsa', hash: 'sha384', curve: 'P-384', coordinateBytes: 48 },
  RS256: { family: 'rsa', hash: 'sha256', hashBytes: 32 },
  PS256: { family: 'rsa-pss', hash: 'sha256', hashBytes: 32 },
  EdDSA: { family: 'eddsa', curve: 'Ed25519' },
};

const ALGORITHM_SET: ReadonlySet<string> = new Set(ALGORITHMS);

/**
 * True when `value` is one of {@link ALGORITHMS}, spelled exactly (JWS names are case-sensitive).
 *
 * @example
 * ```ts
 * isAlgorithm('ES256'); // true
 * isAlgorithm('es256'); // false
 * ```
 */
export function isAlgorithm(value: unknown): value is Algorithm {
  return typeof value === 'string' && ALGORITHM_SET.has(value);
}
