import { type Algorithm, ALGORITHMS, type SignInput, isAlgorithm } from '../algorithms/index.js';
import { JwtGrpcError } from '../errors.js';
import type { KeySet, SigningEntry } from '../keys/key-set.js';
import { checkClaimTypes } from './claims.js';

/**
 * A signed compact JWS and the key that made it.
 *
 * @example
 * ```ts
 * // hidden: declare const signer: Signer;
 * // hidden: const now = Math.floor(Date.now() / 1000);
 * const { token, kid, alg }: SignedToken = signer.sign('HS256', { sub: 'ada@example.com', iat: now, exp: now + 600 });
 * ```
 */
export interface SignedToken {
  readonly token: string;
  readonly kid: string;
  readonly alg: Algorithm;
}

/**
 * Signs claims with the active key of an algorithm; made once by {@link createSigner}.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * // hidden: declare const claims: JwtPayload;
 * const signer: Signer = createSigner(keys);
 * if (signer.algorithms.includes('ES256')) console.log(signer.sign('ES256', claims).token);
 * ```
 */
export interface Signer {
  /** The algorithms this signer can sign with, in key-set order. */
  readonly algorithms: readonly Algorithm[];
  /**
   * Signs `claims` (serialised as given: add iat/exp yourself) with the active key of `alg`.
   * @throws JwtGrpcError `ERR_INVALID_REQUEST` when `alg` has no active key, or when the
   * claims are ones a {@link Verifier} refuses (no `exp`, a claim of the wrong type):
   * a token nobody can verify is never made.
   */
  sign(alg: string, claims: Readonly<Record<string, unknown>>): SignedToken;
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
    const entry = keys.activeEntry(alg) as SigningEntry;
    const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid: entry.kid })).toString('base64url');
    prepared.set(alg, { headerPrefix: header + '.', kid: entry.kid, alg, signInput: entry.spec.prepareSign(entry.signingKey) });
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
      const refused = checkClaimTypes(claims);
      if (refused !== undefined) {
        throw new JwtGrpcError('ERR_INVALID_REQUEST', `cannot sign: ${refused.message}`, { field: 'claims' });
      }
      const input = signer.headerPrefix + Buffer.from(JSON.stringify(claims)).toString('base64url');
      return { token: input + '.' + signer.signInput(input), kid: signer.kid, alg: signer.alg };
    },
  };
}
