/**
 * The names of the JWS algorithms jwt-grpc signs and verifies. A leaf module (it imports
 * nothing), so that types such as `Jwk` can name an algorithm without importing the table.
 */

/**
 * Every algorithm jwt-grpc supports, by its JWS name ([RFC 7518](https://www.rfc-editor.org/rfc/rfc7518); `EdDSA` is Ed25519).
 *
 * @example
 * ```ts
 * const keys = await generateKeys({ algorithms: ALGORITHMS }); // one key each
 * ```
 */
export const ALGORITHMS = ['HS256', 'HS384', 'HS512', 'ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'] as const;

/**
 * One of {@link ALGORITHMS}.
 *
 * @example
 * ```ts
 * const alg: Algorithm = 'ES256';
 * ```
 */
export type Algorithm = (typeof ALGORITHMS)[number];

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
