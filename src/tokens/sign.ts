import { createHmac, constants, sign as cryptoSign } from 'node:crypto';
import { type Algorithm, ALGORITHMS, isAlgorithm } from '../algorithms.js';
import { JwtGrpcError } from '../errors.js';
import type { KeyEntry, KeySet } from '../keys/key-set.js';
import { derToJose } from './ecdsa.js';

/** A signed compact JWS and the key that made it. */
export interface SignedToken {
  readonly token: string;
  readonly kid: string;
  readonly alg: Algorithm;
}

/** Signs claims with the active key of an algorithm; made once by {@link createSigner}. */
export interface Signer {
  /** The algorithms this signer can sign with, in key-set order. */
  readonly algorithms: readonly Algorithm[];
  /**
   * Signs `claims` (serialised as given: add iat/exp yourself) with the active key of `alg`.
   * @throws JwtGrpcError `ERR_INVALID_REQUEST` when `alg` has no active key.
   */
  sign(alg: string, claims: Readonly<Record<string, unknown>>): SignedToken;
}

/** Returns the base64url signature of `input`; everything about the key is bound in. */
export type SignInput = (input: string) => string;

/** @internal the per-key signing function, shared with tests of the verifier */
export function prepareSign(entry: KeyEntry): SignInput {
  const key = entry.signingKey;
  if (key === undefined) throw new JwtGrpcError('ERR_INVALID_KEY', `key "${entry.kid}" cannot sign`);
  const spec = entry.spec;
  switch (spec.family) {
    case 'hmac':
      return (input) => createHmac(spec.hash, key).update(input).digest('base64url');
    case 'ecdsa':
      // The bare KeyObject: DER is the default, and any options object (even dsaEncoding:
      // 'der') takes a slower path in Node 24 (see ecdsa.ts).
      return (input) => derToJose(cryptoSign(spec.hash, Buffer.from(input), key), spec.coordinateBytes).toString('base64url');
    case 'rsa':
      return (input) => cryptoSign(spec.hash, Buffer.from(input), key).toString('base64url');
    case 'rsa-pss': {
      // RFC 7518 §3.5: the salt is as long as the hash output.
      const options = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: spec.hashBytes };
      return (input) => cryptoSign(spec.hash, Buffer.from(input), options).toString('base64url');
    }
    case 'eddsa':
      return (input) => cryptoSign(null, Buffer.from(input), key).toString('base64url');
  }
}

interface PreparedSigner {
  readonly headerPrefix: string;
  readonly kid: string;
  readonly alg: Algorithm;
  readonly signInput: SignInput;
}

/**
 * Prepares signing once per algorithm (encoded header, key bound into a closure) so
 * that `sign` only serialises the claims and runs the primitive.
 *
 * @example
 * ```ts
 * const signer = createSigner(await generateKeys({ algorithms: ['ES256'] }));
 * const now = Math.floor(Date.now() / 1000);
 * const { token, kid } = signer.sign('ES256', { sub: 'ada@example.com', iat: now, exp: now + 7200 });
 * ```
 */
export function createSigner(keys: KeySet): Signer {
  const prepared = new Map<string, PreparedSigner>();
  for (const alg of keys.signingAlgorithms) {
    const entry = keys.activeEntry(alg) as KeyEntry;
    const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid: entry.kid })).toString('base64url');
    prepared.set(alg, { headerPrefix: header + '.', kid: entry.kid, alg, signInput: prepareSign(entry) });
  }
  const algorithms = keys.signingAlgorithms;
  const configured = algorithms.join(', ');

  return {
    algorithms,
    sign(alg, claims) {
      const signer = prepared.get(alg);
      if (signer === undefined) {
        const what = isAlgorithm(alg) ? 'is not configured for signing' : `is not a supported algorithm (${ALGORITHMS.join(', ')})`;
        throw new JwtGrpcError('ERR_INVALID_REQUEST', `algorithm ${JSON.stringify(alg)} ${what}; configured: ${configured}`, {
          field: 'algorithm',
        });
      }
      const input = signer.headerPrefix + Buffer.from(JSON.stringify(claims)).toString('base64url');
      return { token: input + '.' + signer.signInput(input), kid: signer.kid, alg: signer.alg };
    },
  };
}
