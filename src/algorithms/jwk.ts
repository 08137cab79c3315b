import type { Algorithm } from './names.js';

/**
 * A JSON Web Key ([RFC 7517](https://www.rfc-editor.org/rfc/rfc7517), members of [RFC 7518 §6](https://www.rfc-editor.org/rfc/rfc7518#section-6)) as jwt-grpc exports it: always with
 * `kid` and `alg`. Defined here rather than taken from a runtime's type definitions, so
 * the package's declarations do not change when those move a name.
 *
 * A type alias, not an interface, so a `Jwk` is also assignable where a plain
 * `Record<string, unknown>` is asked for (`importKeys`' entries, other libraries' JWKs).
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const jwk: Jwk = exportKeys(keys).keys[0]!;
 * if (jwk.kty === 'EC') console.log(jwk.crv, jwk.x, jwk.y);
 * ```
 */
export type Jwk = {
  /** Key type: `oct` (HMAC secret), `EC`, `RSA` or `OKP` (Ed25519). */
  kty: string;
  /** Curve of an EC or OKP key: `P-256`, `P-384`, `Ed25519`. */
  crv?: string;
  /** EC or OKP public key coordinates (base64url). */
  x?: string;
  y?: string;
  /** RSA modulus and public exponent (base64url). */
  n?: string;
  e?: string;
  /** Private members: the EC/OKP private key or RSA private exponent, and the RSA CRT values. */
  d?: string;
  p?: string;
  q?: string;
  dp?: string;
  dq?: string;
  qi?: string;
  /** The secret of an `oct` key (base64url). */
  k?: string;
  /** Operations the key may serve; without `"sign"` a key only verifies. */
  key_ops?: string[];
  /**
   * When the key stopped signing ([RFC 3339](https://www.rfc-editor.org/rfc/rfc3339), UTC): jwt-grpc's own member, written by
   * `jwt-grpc keys rotate`; a key that has one only verifies. Never in a public export.
   */
  deactivated_at?: string;
  /** `sig` on every public key jwt-grpc exports. */
  use?: string;
  kid: string;
  alg: Algorithm;
};

/** A JWK without its `kid` and `alg`: what an algorithm family exports from a KeyObject. */
export type JwkMembers = Omit<Jwk, 'kid' | 'alg'>;
