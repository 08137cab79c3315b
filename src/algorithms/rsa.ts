import { Buffer } from 'node:buffer';
import { type KeyObject, constants, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { bigIntFromBase64url, gcd } from './bigint.js';
import { asymmetricJwk, exportJwk, generatePair } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/** Smallest RSA modulus accepted, in bits ([RFC 7518 §3.3](https://www.rfc-editor.org/rfc/rfc7518#section-3.3) requires 2048). */
const MIN_RSA_BITS = 2048;

/**
 * Public exponents accepted: odd, at least 65537 and below 2^256 (FIPS 186-5 §A.1.1). An
 * exponent of 1 makes every signature its own message (anyone forges one), a small one
 * invites Bleichenbacher-style forgeries against lax verifiers, an even one has no private
 * exponent, and a huge one makes each verification cost a private-key operation.
 */
const RSA_EXPONENT = { min: 65537n, maxBits: 256 } as const;

/** What is wrong with an RSA public exponent, or undefined. */
function exponentProblem(e: bigint): string | undefined {
  if (e < RSA_EXPONENT.min) return `public exponent ${e} is below ${RSA_EXPONENT.min}`;
  if ((e & 1n) === 0n) return 'public exponent is even';
  if (e >> BigInt(RSA_EXPONENT.maxBits) !== 0n) return `public exponent is ${RSA_EXPONENT.maxBits} bits or longer`;
  return undefined;
}

/**
 * Whether a private key's members agree: n = p*q, d inverts e modulo lcm(p-1, q-1), and the
 * CRT values are d mod (p-1), d mod (q-1) and q^-1 mod p. OpenSSL signs with the CRT values
 * and, when the result does not verify, quietly signs again with d: a key whose members
 * disagree may sign with material other than the file's, so it is refused.
 */
function privateProblem(key: KeyObject): string | undefined {
  const jwk = exportJwk(key);
  const member = (value: string | undefined) => bigIntFromBase64url(value ?? '');
  const [n, e, d, p, q] = [member(jwk.n), member(jwk.e), member(jwk.d), member(jwk.p), member(jwk.q)];
  const mismatch = 'private key does not match its public key';
  if (p <= 1n || q <= 1n || p * q !== n) return `${mismatch}: n is not p*q`;
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  if ((e * d) % lambda !== 1n) return `${mismatch}: d does not invert e`;
  if (member(jwk.dp) !== d % (p - 1n) || member(jwk.dq) !== d % (q - 1n) || (member(jwk.qi) * q) % p !== 1n) {
    return `${mismatch}: its CRT values (dp, dq, qi) disagree with d, p and q`;
  }
  return undefined;
}

/** Key check and generation shared by RS256 and PS256: a plain RSA key serves both, the padding is per signature. */
const rsaKey: Pick<AlgorithmSpec, 'symmetric' | 'checkKey' | 'checkStrength' | 'checkPrivate' | 'generate' | 'publicJwk' | 'fullJwk'> = {
  symmetric: false,
  checkKey(key) {
    if (key.asymmetricKeyType !== 'rsa') return 'needs an RSA key';
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return bits < MIN_RSA_BITS ? `needs an RSA modulus of at least ${MIN_RSA_BITS} bits, got ${bits}` : undefined;
  },
  checkStrength: (key) => exponentProblem(key.asymmetricKeyDetails?.publicExponent ?? 0n),
  checkPrivate: (key) => (key.type === 'private' ? privateProblem(key) : undefined),
  async generate() {
    const { privateKey, publicKey } = await generatePair('rsa', { modulusLength: MIN_RSA_BITS });
    return { signingKey: privateKey, verificationKey: publicKey };
  },
  ...asymmetricJwk,
};

/** RS256 (RFC 7518 §3.3): RSASSA-PKCS1-v1_5 with `hash`. */
export function rsa(hash: string): AlgorithmSpec {
  return {
    ...rsaKey,
    prepareSign: (key) => (input) => cryptoSign(hash, input, key).toString('base64url'),
    prepareVerify: (key) => (input, signature) => cryptoVerify(hash, input, key, Buffer.from(signature, 'base64url')),
  };
}

/** PS256 (RFC 7518 §3.5): RSASSA-PSS with `hash` and MGF1, the salt as long as the hash output. */
export function rsaPss(hash: string, hashBytes: number): AlgorithmSpec {
  const pss = (key: KeyObject) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: hashBytes });
  return {
    ...rsaKey,
    prepareSign: (key) => {
      const options = pss(key);
      return (input) => cryptoSign(hash, input, options).toString('base64url');
    },
    prepareVerify: (key) => {
      const options = pss(key);
      return (input, signature) => cryptoVerify(hash, input, options, Buffer.from(signature, 'base64url'));
    },
  };
}
