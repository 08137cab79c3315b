import { JwtGrpcError } from '../errors.js';
import { exportKeys } from '../keys/export.js';
import type { KeySet } from '../keys/key-set.js';
import { type Signer, createSigner } from '../tokens/sign.js';
import { type Verifier, createVerifier } from '../tokens/verify.js';
import type {
  GenerateJwtRequest,
  GenerateJwtResponse,
  GetJwksResponse,
  VerifyJwtRequest,
  VerifyJwtResponse,
} from './definition.js';
import { type ResolvedServiceOptions, checkServiceKeys } from './options.js';
import { requestClaims } from './request-claims.js';
import { type SubjectPool, createSubjectPool } from './subject-pool.js';

/** Everything derived from one KeySet, swapped as a whole on rotation. */
interface KeyState {
  readonly keys: KeySet;
  readonly signer: Signer;
  readonly verifier: Verifier;
  readonly jwks: GetJwksResponse;
}

/**
 * JwtService's logic without the transport: the gRPC handlers only map its results and
 * `ERR_INVALID_REQUEST` errors onto gRPC statuses. @internal
 */
export class JwtServiceCore {
  readonly #options: ResolvedServiceOptions;
  readonly #pool: SubjectPool | undefined;
  #state: KeyState;

  constructor(options: ResolvedServiceOptions, keys: KeySet) {
    this.#options = options;
    this.#pool = options.subjects.length > 0 ? createSubjectPool(options.subjects) : undefined;
    this.#state = this.#prepare(checkServiceKeys(keys));
  }

  get keys(): KeySet {
    return this.#state.keys;
  }

  /** Rotation: new signer, verifier (and so an empty verification cache) and JWK Set. */
  setKeys(keys: KeySet): void {
    this.#state = this.#prepare(checkServiceKeys(keys));
  }

  #prepare(keys: KeySet): KeyState {
    const options = this.#options;
    return {
      keys,
      signer: createSigner(keys),
      verifier: createVerifier(keys, {
        clockToleranceSeconds: options.clockToleranceSeconds,
        maxTokenLength: options.maxTokenLength,
        cache: options.verifyCache,
      }),
      jwks: { jwks_json: JSON.stringify(exportKeys(keys)) },
    };
  }

  generate(request: GenerateJwtRequest): GenerateJwtResponse {
    const state = this.#state;
    const { sub, exp, claims } = requestClaims(request, this.#options, this.#pool, Math.floor(Date.now() / 1000));
    const { token, kid } = state.signer.sign(request.algorithm, claims);
    // The reference's contract: verify the token just made and check its subject before
    // answering. Uncached: a fresh token is seen once and would only churn the cache.
    const check = state.verifier.verifyUncached(token);
    if (!check.valid || check.payload.sub !== sub) {
      throw new Error(`self-check of a token signed with kid ${kid} failed: ${check.valid ? 'sub differs' : check.reason}`);
    }
    return { jwt: token, sub, kid, expires_at: exp };
  }

  verify(request: VerifyJwtRequest): VerifyJwtResponse {
    const token = request.jwt;
    if (token.length === 0) throw new JwtGrpcError('ERR_INVALID_REQUEST', 'jwt: is empty', { field: 'jwt' });
    if (token.length > this.#options.maxTokenLength) {
      throw new JwtGrpcError(
        'ERR_INVALID_REQUEST',
        `jwt: is ${token.length} characters; the limit is ${this.#options.maxTokenLength} (option maxTokenLength)`,
        { field: 'jwt' },
      );
    }
    const result = this.#state.verifier.verify(token, { audience: request.audience, issuer: request.issuer });
    if (!result.valid) return { valid: false, sub: '', claims_json: '', reason: result.reason };
    return { valid: true, sub: result.payload.sub ?? '', claims_json: result.payloadJson, reason: 'REASON_UNSPECIFIED' };
  }

  jwks(): GetJwksResponse {
    return this.#state.jwks;
  }
}
