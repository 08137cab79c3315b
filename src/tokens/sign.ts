import { Buffer } from 'node:buffer';
import { type Algorithm, ALGORITHMS, type CheckSignature, type SignInput, isAlgorithm } from '../algorithms/index.js';
import { JwtGrpcError } from '../base/errors.js';
import type { KeyHandle } from '../keys/backend.js';
import type { KeySet, SigningEntry } from '../keys/key-set.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { optionValue } from '../options/resolve.js';
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
  /**
   * True when the active key of `alg` is held by an HSM or a KMS (a handle): such a key signs
   * only through {@link Signer.signAsync}; {@link Signer.sign} refuses it.
   */
  isAsync(alg: string): boolean;
  /**
   * Signs as {@link Signer.sign} does, with any key, a handle included: the backend signs,
   * within `keyBackendTimeoutMs`. A backend that fails or is slow rejects with
   * `ERR_KEY_BACKEND_UNAVAILABLE` naming the key; no other key ever signs in its place.
   */
  signAsync(alg: string, claims: Readonly<Record<string, unknown>>): Promise<SignedToken>;
  /**
   * True when `signed`'s signature verifies with the public key (or secret) of the key that
   * made it, over its signing input as issued: the check that a key pair signs what it can
   * verify, without re-parsing the header and payload this signer has just built. False for a
   * token of another key, another algorithm, or one whose signature does not verify.
   */
  checkIssued(signed: SignedToken): boolean;
}

/**
 * What sign and signAsync return: a {@link SignedToken} that also holds, privately, what it
 * was made of (its signing input as bytes, and its signature), so that checkIssued verifies
 * the signer's own token without finding the input again and encoding it a second time.
 * Private fields: a caller sees token, kid and alg, as from any SignedToken.
 */
class IssuedToken implements SignedToken {
  readonly token: string;
  readonly kid: string;
  readonly alg: Algorithm;
  /** The token as made, to tell it from a `token` a caller has since replaced. */
  readonly #token: string;
  readonly #input: Buffer;
  readonly #signature: string;

  constructor(input: string, inputBytes: Buffer, signature: string, kid: string, alg: Algorithm) {
    this.token = this.#token = input + '.' + signature;
    this.kid = kid;
    this.alg = alg;
    this.#input = inputBytes;
    this.#signature = signature;
  }

  /**
   * `check` run on the signing input and the signature `signed` was made of; undefined when
   * `signed` is not an IssuedToken, or its token is no longer the one made (then the caller
   * reads them from the token).
   */
  static checkOwn(signed: SignedToken, check: CheckSignature): boolean | undefined {
    if (!(#token in signed) || signed.token !== signed.#token) return undefined;
    return check(signed.#input, signed.#signature);
  }
}

interface PreparedSigner {
  readonly headerPrefix: string;
  readonly kid: string;
  readonly alg: Algorithm;
  /** Undefined for a handle, which signs through `handle`. */
  readonly signInput: SignInput | undefined;
  readonly handle: KeyHandle | undefined;
  /** The verifying closure of the same entry's verification key: what checkIssued runs. */
  readonly check: CheckSignature;
}

/** The claims JSON a signer encodes without a buffer of its own: up to 1,365 UTF-16 units (most claim sets are a few hundred). */
const CLAIMS_SCRATCH_BYTES = 4096;

/** The one name createSigner's options hold. */
const SIGNER_OPTION_NAMES = optionNames<SignerOptions>({ keyBackendTimeoutMs: true });

/**
 * How a {@link Signer} treats keys held by an HSM or a KMS.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const options: SignerOptions = { keyBackendTimeoutMs: 500 };
 * const signer = createSigner(keys, options);
 * ```
 */
export interface SignerOptions {
  /** How long `signAsync` waits for a backend, queueing included, 1 to 60000 ms. Default 2000. */
  readonly keyBackendTimeoutMs?: number;
}

/** Each signing algorithm's active key, its encoded header and its primitives, bound once. */
function prepareSigners(keys: KeySet): Map<string, PreparedSigner> {
  const prepared = new Map<string, PreparedSigner>();
  for (const alg of keys.signingAlgorithms) {
    const entry = keys.activeEntry(alg) as SigningEntry;
    const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid: entry.kid })).toString('base64url');
    const signInput = 'signingKey' in entry && entry.signingKey !== undefined ? entry.spec.prepareSign(entry.signingKey) : undefined;
    const check = entry.spec.prepareVerify(entry.verificationKey);
    prepared.set(alg, { headerPrefix: header + '.', kid: entry.kid, alg, signInput, handle: entry.handle, check });
  }
  return prepared;
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
export function createSigner(keys: KeySet, options: SignerOptions = {}): Signer {
  refuseUnknownOptions(options, SIGNER_OPTION_NAMES, { owner: 'createSigner' });
  // Through the option table, as createVerifier's options: its bound and its default, written once.
  const timeoutMs = optionValue('keyBackendTimeoutMs', options.keyBackendTimeoutMs);
  const prepared = prepareSigners(keys);
  const algorithms = keys.signingAlgorithms;
  const configured = algorithms.join(', ');
  const claimsScratch = Buffer.allocUnsafeSlow(CLAIMS_SCRATCH_BYTES);

  /** base64url of the claims' JSON as UTF-8: through this signer's scratch, filled and read here, unless the JSON may not fit. */
  const encodeClaims = (json: string): string => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (json.length * 3 > CLAIMS_SCRATCH_BYTES) return Buffer.from(json).toString('base64url');
    return claimsScratch.toString('base64url', 0, claimsScratch.write(json));
  };

  /** The prepared signer of `alg` and the signing input of `claims`, or the refusal. */
  const begin = (alg: string, claims: Readonly<Record<string, unknown>>): { signer: PreparedSigner; input: string } => {
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
    return { signer, input: signer.headerPrefix + encodeClaims(JSON.stringify(claims)) };
  };

  /** Signs `input` (its UTF-8 bytes, encoded once: checkIssued verifies the same bytes). */
  const issue = (signer: PreparedSigner, input: string, signInput: SignInput): IssuedToken => {
    const bytes = Buffer.from(input);
    return new IssuedToken(input, bytes, signInput(bytes), signer.kid, signer.alg);
  };

  return {
    algorithms,
    sign(alg, claims) {
      const { signer, input } = begin(alg, claims);
      if (signer.signInput === undefined) {
        throw new JwtGrpcError(
          'ERR_INVALID_KEY',
          `key ${signer.kid} is held by ${signer.handle?.member ?? 'a key backend'}: it signs only through signAsync`,
          { field: signer.kid },
        );
      }
      return issue(signer, input, signer.signInput);
    },
    isAsync(alg) {
      return prepared.get(alg)?.handle !== undefined;
    },
    async signAsync(alg, claims) {
      const { signer, input } = begin(alg, claims);
      if (signer.signInput !== undefined) return issue(signer, input, signer.signInput);
      const bytes = Buffer.from(input);
      const signature = await (signer.handle as KeyHandle).sign(bytes, timeoutMs);
      return new IssuedToken(input, bytes, signature.toString('base64url'), signer.kid, signer.alg);
    },
    checkIssued(signed) {
      const signer = prepared.get(signed.alg);
      if (signer === undefined || signer.kid !== signed.kid) return false;
      const own = IssuedToken.checkOwn(signed, signer.check);
      if (own !== undefined) return own;
      // Any other SignedToken: its signing input is the token up to its last dot (no split,
      // no base64url or JSON decoding), starting with this key's header.
      const { token } = signed;
      const dot = token.lastIndexOf('.');
      return dot > 0 && token.startsWith(signer.headerPrefix) && signer.check(Buffer.from(token.slice(0, dot)), token.slice(dot + 1));
    },
  };
}
