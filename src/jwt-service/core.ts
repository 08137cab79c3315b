import { JwtGrpcError } from '../base/errors.js';
import { exportKeys } from '../keys/export.js';
import type { KeySet } from '../keys/key-set.js';
import { type SignedToken, type Signer, createSigner } from '../tokens/sign.js';
import { type KeyVerifier, createKeyVerifier } from '../tokens/verify.js';
import { failure } from '../tokens/result.js';
import { newJti } from '../tokens/jti.js';
import { type AdminSecret, authorizeRevoke } from '../revocation/admin.js';
import { Revocations } from '../revocation/revocations.js';
import type { Revocation } from '../contracts/revocation-store.js';
import type {
  ExchangeTokenRequest,
  ExchangeTokenResponse,
  GenerateJwtRequest,
  GenerateJwtResponse,
  GetJwksResponse,
  GetStatusListRequest,
  GetStatusListResponse,
  RevokeJwtRequest,
  RevokeJwtResponse,
  VerifyJwtRequest,
  VerifyJwtResponse,
} from './messages.js';
import { type ResolvedServiceOptions, checkServiceKeys } from './options.js';
import { type JwtPolicy, checkPolicy } from '../policy/document.js';
import { type Granted, IssuancePolicy, PolicyDenied } from '../policy/enforce.js';
import type { CallContext, CallerIdentity } from '../contracts/handler-api.js';
import { requestClaims } from './request-claims.js';
import type { StatusListIssuer } from '../revocation/status-list/issuer.js';
import { statusListAlgorithm } from '../revocation/status-list/token.js';
import { revocationOf } from './revoke-request.js';
import { type SubjectPool, createSubjectPool } from './subject-pool.js';
import type { CoreObserver } from './observer.js';
import { type OwnTokens, type TokenTrust, decideExchange } from '../exchange/exchange.js';
import type { VerifyResult } from '../tokens/result.js';

/** What RevokeJwt reads and writes: the revocations VerifyJwt checks, and who may add to them. */
export interface RevocationOptions {
  readonly revocations: Revocations;
  /** The admin secret (adminTokenFile); undefined: only the policy's revokers may revoke. */
  readonly admin?: AdminSecret;
}

/** Everything derived from one KeySet, swapped as a whole on rotation. */
interface KeyState {
  readonly keys: KeySet;
  readonly signer: Signer;
  readonly verifier: KeyVerifier;
  readonly jwks: GetJwksResponse;
  /** True when a key of the set is a handle (HSM, KMS): only then does GenerateJwt ask whether to sign asynchronously. */
  readonly hasHandles: boolean;
  /** What an exchange signs with when the trust file names no algorithm: a JWK Set can publish it unless the keys are all HMAC. */
  readonly exchangeAlgorithm: string;
}

/**
 * What {@link JwtServiceCore} is made of: validated options, checked keys, and what is
 * optional (observers, revocation, a status list). @internal
 */
export interface JwtServiceCoreOptions<S = undefined> {
  readonly options: ResolvedServiceOptions;
  /** Has passed checkServiceKeys where it was given. */
  readonly keys: KeySet;
  /** Audit lines, metrics and spans (composeObservers); none: the core tells nobody. */
  readonly observer?: CoreObserver<S>;
  readonly revocation?: RevocationOptions;
  /** With `statusList`: the list every new token gets an index in. */
  readonly statusList?: StatusListIssuer;
  /** Token exchange: the trust file's issuers, and the algorithm it names; without it, ExchangeToken is refused. */
  readonly exchange?: ExchangeOptions;
}

/** What ExchangeToken needs: the trust (made once the core can verify its own tokens) and the algorithm to sign with. @internal */
export interface ExchangeOptions {
  readonly trust: (own: OwnTokens) => TokenTrust;
  /** Undefined: the first algorithm of the keys that a JWK Set can publish. */
  readonly algorithm: string | undefined;
}

/**
 * JwtService's logic without the transport: it returns responses and throws
 * `JwtGrpcError`s whose codes the transport adapter (handlers.ts) maps to gRPC statuses,
 * and tells what it did to its observer. `S` is the scope a call passes to the observer
 * (a span), which the core never reads. @internal
 */
export class JwtServiceCore<S = undefined> {
  readonly #options: ResolvedServiceOptions;
  readonly #pool: SubjectPool | undefined;
  /** The issuance policy; undefined in open mode. Replaced whole by setPolicy: a call reads it once. */
  #policy: IssuancePolicy | undefined;
  readonly #observer: CoreObserver<S>;
  /** `verifyIssued`: GenerateJwt verifies what it signed before answering (the reference benchmark's work). */
  readonly #verifyIssued: boolean;
  #state: KeyState;
  /** With `statusList`: the list every new token gets an index in; undefined otherwise. */
  readonly #statusList: StatusListIssuer | undefined;
  readonly #revocations: Revocations;
  readonly #admin: AdminSecret | undefined;
  /** Cache lookups of the verifiers that earlier key sets had. */
  #pastCacheStats = { hits: 0, misses: 0 };
  /** With `trust`: the issuers whose tokens ExchangeToken takes, and the algorithm it signs with (undefined: the key state's). */
  readonly #exchange: { readonly issuers: TokenTrust; readonly algorithm: string | undefined } | undefined;

  constructor({ options, keys, observer = {}, revocation, statusList, exchange }: JwtServiceCoreOptions<S>) {
    this.#options = options;
    this.#verifyIssued = options.verifyIssued;
    this.#statusList = statusList;
    this.#revocations = revocation?.revocations ?? new Revocations();
    this.#admin = revocation?.admin;
    this.#pool = options.subjects.length > 0 ? createSubjectPool(options.subjects) : undefined;
    this.#observer = observer;
    this.#policy = options.policy === undefined ? undefined : new IssuancePolicy(options.policy);
    this.#state = this.#prepare(keys);
    this.#exchange =
      exchange === undefined
        ? undefined
        : { issuers: exchange.trust({ issuer: options.issuer, verify: (token) => this.#verifyOwn(token) }), algorithm: exchange.algorithm };
  }

  /** Fetches the keys of the trust file's external issuers, so that no exchange waits on the network once warm; a no-op without a trust file. */
  warmExchange(): Promise<void> {
    return this.#exchange?.issuers.warm() ?? Promise.resolve();
  }

  get policy(): JwtPolicy | undefined {
    return this.#policy?.policy;
  }

  /** Checks `policy` and puts it in use; a broken one throws and the policy in use stays. */
  setPolicy(policy: JwtPolicy): void {
    const next = new IssuancePolicy(checkPolicy(policy), this.#policy);
    this.#policy = next;
    this.#observer.onPolicyReplaced?.(next.policy);
  }

  get keys(): KeySet {
    return this.#state.keys;
  }

  /** The Token Status List issuer with `statusList` on: revocations reach remote verifiers through its `revoke(idx)`. */
  get statusList(): StatusListIssuer | undefined {
    return this.#statusList;
  }

  get revocations(): Revocations {
    return this.#revocations;
  }

  /** Lookups of the VerifyJwt cache since the service started, across key sets. */
  get cacheStats(): { readonly hits: number; readonly misses: number } {
    const now = this.#state.verifier.cacheStats();
    return { hits: this.#pastCacheStats.hits + now.hits, misses: this.#pastCacheStats.misses + now.misses };
  }

  /**
   * Rotation: new signer, verifier (and so an empty verification cache) and JWK Set, in
   * one assignment: a call reads the state once, so it ends with the keys it started with.
   */
  setKeys(keys: KeySet): void {
    // The status list is signed with an asymmetric key: a set without one would leave verifiers without a list.
    if (this.#statusList !== undefined) statusListAlgorithm(keys);
    const next = this.#prepare(checkServiceKeys(keys));
    this.#pastCacheStats = this.cacheStats;
    const previous = this.#state.keys;
    this.#state = next;
    // The replaced set's HSM/KMS sessions close once the calls that started with it have had their deadline.
    const stale = previous.handles().filter((handle) => !keys.handles().includes(handle));
    if (stale.length > 0)
      setTimeout(() => void Promise.all(stale.map((handle) => handle.close())), this.#options.keyBackendTimeoutMs).unref();
  }

  #prepare(keys: KeySet): KeyState {
    const options = this.#options;
    return {
      keys,
      signer: createSigner(keys, { keyBackendTimeoutMs: options.keyBackendTimeoutMs }),
      hasHandles: keys.handles().length > 0,
      verifier: createKeyVerifier(keys, {
        clockToleranceSeconds: options.clockToleranceSeconds,
        maxTokenLength: options.maxTokenLength,
        cache: { maxEntries: options.verifyCache },
      }),
      jwks: { jwks_json: JSON.stringify(exportKeys(keys)) },
      exchangeAlgorithm: keys.signingAlgorithms.find((alg) => !alg.startsWith('HS')) ?? (keys.signingAlgorithms[0] as string),
    };
  }

  /**
   * Signs what `request` asks for; with a policy, only what it allows the call's caller
   * (`ERR_PERMISSION_DENIED` otherwise). A caller with a certificate id is named in
   * `client_id`; a bound token carries the certificate's thumbprint in `cnf`. The observers
   * hear of the token signed (`onIssued`) or of the failure (`onRefused`), with `scope`.
   */
  generate(request: GenerateJwtRequest, call?: Pick<CallContext, 'caller'>, scope?: S): GenerateJwtResponse | Promise<GenerateJwtResponse> {
    const policy = this.#policy;
    const caller = call?.caller;
    const nowSeconds = Math.floor(Date.now() / 1000);
    let granted: Granted<GenerateJwtRequest> | undefined;
    try {
      let prepared: { sub: string; exp: number; claims: Record<string, unknown> };
      if (policy === undefined) {
        const { sub, exp, claims } = requestClaims(request, this.#options, this.#pool, nowSeconds);
        prepared = {
          sub,
          exp,
          claims: caller === undefined && !this.#options.bindTokens ? claims : this.#callerClaims(claims, caller, false),
        };
      } else {
        granted = policy.authorize(caller, request, this.#options.defaultTtlSeconds);
        const { sub, exp, claims } = requestClaims(granted.request, this.#options, undefined, nowSeconds);
        policy.checkClaims(granted, claims);
        // Under a policy every token has a jti, whatever the jti option: the audit line names it.
        if (claims['jti'] === undefined) claims['jti'] = newJti();
        prepared = { sub, exp, claims: this.#callerClaims(claims, caller, granted.entry.bind === true) };
      }
      const { sub, exp, claims } = prepared;
      const issued = (signed: SignedToken): GenerateJwtResponse => {
        this.#observer.onIssued?.({ request, alg: signed.alg, kid: signed.kid, sub, exp, claims, nowSeconds, granted }, scope);
        return { jwt: signed.token, sub, kid: signed.kid, expires_at: exp };
      };
      const signed = this.#sign(request.algorithm, claims);
      // A key held by an HSM or KMS signs later: its outcome is observed when it is known.
      if (signed instanceof Promise)
        return signed.then(issued).catch((err: unknown) => this.#refused(err, request, policy !== undefined, granted, scope));
      return issued(signed);
    } catch (err) {
      return this.#refused(err, request, policy !== undefined, granted, scope);
    }
  }

  /** Tells the observers of a failed GenerateJwt, then throws `err` on to the transport adapter. */
  #refused(
    err: unknown,
    request: GenerateJwtRequest,
    underPolicy: boolean,
    granted: Granted<GenerateJwtRequest> | undefined,
    scope: S | undefined,
  ): never {
    this.#observer.onRefused?.({ request, error: err, underPolicy, granted }, scope);
    throw err;
  }

  /** Adds who asked (`client_id`) and, for a bound token, the certificate it is bound to (`cnf`). */
  #callerClaims(claims: Record<string, unknown>, caller: CallerIdentity | undefined, bind: boolean): Record<string, unknown> {
    if ((bind || this.#options.bindTokens) && caller === undefined) {
      throw new PolicyDenied('bind', undefined, 'a bound token needs a verified client certificate to bind to (serve mutual TLS)');
    }
    if (caller === undefined) return claims;
    if (caller.id !== undefined) claims['client_id'] = caller.id;
    if (bind || this.#options.bindTokens) claims['cnf'] = { 'x5t#S256': caller.thumbprint };
    return claims;
  }

  /**
   * Signs `claims` with the key state in use when the call started; a key held by an HSM or
   * a KMS signs asynchronously, and its backend's failure or slowness (past
   * keyBackendTimeoutMs, or an open circuit breaker) rejects with `ERR_KEY_BACKEND_UNAVAILABLE` naming the key.
   */
  #sign(algorithm: string, claims: Record<string, unknown>): SignedToken | Promise<SignedToken> {
    const state = this.#state;
    // Its own index in the status list (draft-ietf-oauth-status-list-20 section 6.2): an increment,
    // or a wait for the block being reserved when the current one ran out.
    if (this.#statusList !== undefined) {
      const claim = this.#statusList.claimFor();
      if (claim instanceof Promise)
        return claim.then((held) => {
          claims['status'] = held;
          return this.#signWith(state, algorithm, claims);
        });
      claims['status'] = claim;
    }
    return this.#signWith(state, algorithm, claims);
  }

  /** Signs `claims` with `state`: asynchronously for a key held by an HSM or a KMS. */
  #signWith(state: KeyState, algorithm: string, claims: Record<string, unknown>): SignedToken | Promise<SignedToken> {
    // One boolean for a key set held in memory: the synchronous path below is the usual one.
    if (state.hasHandles && state.signer.isAsync(algorithm)) {
      const pending = state.signer.signAsync(algorithm, claims);
      return this.#verifyIssued ? pending.then((signed) => checkIssued(state, signed)) : pending;
    }
    const signed = state.signer.sign(algorithm, claims);
    return this.#verifyIssued ? checkIssued(state, signed) : signed;
  }

  /** Verifies a token; the observers get the result (`onVerified`), with `scope`. */
  verify(request: VerifyJwtRequest, scope?: S): VerifyJwtResponse {
    const token = request.jwt;
    if (token.length === 0) throw new JwtGrpcError('ERR_INVALID_REQUEST', 'jwt: is empty', { field: 'jwt' });
    if (token.length > this.#options.maxTokenLength) {
      throw new JwtGrpcError(
        'ERR_INVALID_REQUEST',
        `jwt: is ${token.length} characters; the limit is ${this.#options.maxTokenLength} (option maxTokenLength)`,
        { field: 'jwt' },
      );
    }
    let result = this.#state.verifier.verify(token, { audience: request.audience, issuer: request.issuer });
    // After the signature and claims: a revoked token that has also expired says EXPIRED.
    // One size check while nothing is revoked, one Map lookup after.
    if (result.valid && this.#revocations.size > 0 && this.#revocations.has(result.payload['jti']))
      result = failure('REVOKED', 'token was revoked');
    this.#observer.onVerified?.(result, scope);
    if (!result.valid) return { valid: false, sub: '', claims_json: '', reason: result.reason };
    return { valid: true, sub: result.payload.sub ?? '', claims_json: result.payloadJson, reason: 'REASON_UNSPECIFIED' };
  }

  /**
   * ExchangeToken (RFC 8693): verifies the subject (and actor) token through the trust file,
   * decides under the policy, signs the new token. Refusals are `ExchangeRefused` errors
   * (src/exchange/refusal.ts); `ERR_NO_TOKEN_EXCHANGE` without a trust file. Every outcome
   * goes to the observers (`onExchange`: the audit line, the count).
   */
  async exchange(request: ExchangeTokenRequest, call?: Pick<CallContext, 'caller'>): Promise<ExchangeTokenResponse> {
    const exchange = this.#exchange;
    if (exchange === undefined)
      throw new JwtGrpcError('ERR_NO_TOKEN_EXCHANGE', 'this server exchanges no tokens (option trustFile, --trust-file)');
    const caller = call?.caller;
    try {
      const options = this.#options;
      const decision = await decideExchange(request, caller, {
        issuers: exchange.issuers,
        policy: this.#policy,
        limits: options,
        nowSeconds: Math.floor(Date.now() / 1000),
      });
      const signed = await this.#sign(exchange.algorithm ?? this.#state.exchangeAlgorithm, decision.claims);
      this.#observer.onExchange?.({ outcome: 'issued', decision, alg: signed.alg, kid: signed.kid, caller });
      return {
        access_token: signed.token,
        issued_token_type: decision.issuedTokenType,
        token_type: 'Bearer',
        expires_in: decision.ttl,
        // RFC 8693 section 2.2.1: required when it is not the scope asked.
        scope: decision.scopeNarrowed ? decision.scope : '',
      };
    } catch (err) {
      this.#observer.onExchange?.({ outcome: 'refused', request, error: err, caller });
      throw err;
    }
  }

  /** A token this server issued, for an exchange: its keys, its `iss`, and neither revoked by jti nor in its status list. */
  #verifyOwn(token: string): VerifyResult {
    const result = this.#state.verifier.verify(token);
    if (!result.valid) return result;
    // Compared here rather than passed as an expectation, which the verifier would check for unknown names on every call.
    if (result.payload.iss !== this.#options.issuer) return failure('ISSUER_MISMATCH', 'token was not issued by this server');
    if (this.#revocations.size > 0 && this.#revocations.has(result.payload['jti'])) return failure('REVOKED', 'token was revoked');
    const list = this.#statusList;
    const index = list?.indexOf(result.payload);
    if (index !== undefined && list?.isRevoked(index) === true) return failure('REVOKED', 'token was revoked (status list)');
    return result;
  }

  jwks(): GetJwksResponse {
    return this.#state.jwks;
  }

  /** The signed status list `request.uri` names (empty: the one new tokens go into); `ERR_NO_STATUS_LIST` without statusList, `ERR_UNKNOWN_STATUS_LIST` for a uri not ours. */
  statusListToken(request: GetStatusListRequest): GetStatusListResponse {
    const list = this.#statusList;
    if (list === undefined)
      throw new JwtGrpcError('ERR_NO_STATUS_LIST', 'this server keeps no status list (option statusList, --status-list)');
    return { token: list.token(request.uri === '' ? undefined : request.uri) };
  }

  /**
   * RevokeJwt: checks who asks (the admin secret, or a revoker of the policy), reads what
   * to revoke, makes it durable in the store and holds it. Every outcome goes to the
   * observers (`onRevoke`: the audit line, the count); a store that refuses it is
   * `ERR_REVOCATION_STORE_UNAVAILABLE`, having revoked nothing.
   */
  async revoke(request: RevokeJwtRequest, call: Pick<CallContext, 'caller' | 'metadata'>): Promise<RevokeJwtResponse> {
    let by: string;
    try {
      by = authorizeRevoke(call, this.#admin, this.#policy?.policy.revokers);
    } catch (err) {
      const outcome = err instanceof JwtGrpcError && err.code === 'ERR_UNAUTHENTICATED' ? 'unauthenticated' : 'denied';
      this.#observer.onRevoke?.({ outcome, caller: call.caller, error: err });
      throw err;
    }
    let revocation: Revocation;
    try {
      revocation = revocationOf(request, this.#state.verifier, this.#options, Math.floor(Date.now() / 1000), this.#statusList?.indexOf);
    } catch (err) {
      this.#observer.onRevoke?.({ outcome: 'invalid', error: err });
      throw err;
    }
    let fresh: boolean;
    try {
      fresh = await this.#revocations.revoke(revocation);
    } catch (err) {
      this.#observer.onRevoke?.({ outcome: 'unavailable', revocation, error: err });
      throw new JwtGrpcError(
        'ERR_REVOCATION_STORE_UNAVAILABLE',
        `the revocation store is unavailable; nothing was revoked: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const expiresAt = this.#revocations.expiresAt(revocation.jti) ?? revocation.expiresAt;
    this.#observer.onRevoke?.({ outcome: fresh ? 'revoked' : 'already', by, revocation, expiresAt });
    return { revoked: true, expires_at: expiresAt };
  }
}

/**
 * `verifyIssued`: verifies a token just signed before it is answered, as the reference
 * peers do (bench/peers/go/main.go), so a GenerateJwt costs one sign and one verify on
 * both; a key pair that signs what it cannot verify fails the call (`ERR_SELF_CHECK_FAILED`,
 * INTERNAL). Only the signature, over the signing input as issued, with the active key's
 * public half (`Signer.checkIssued`): the header and payload are what the signer just
 * built, so parsing them again would check nothing (bench/PERFORMANCE.md, "ES256 budget").
 */
function checkIssued(state: KeyState, signed: SignedToken): SignedToken {
  if (!state.signer.checkIssued(signed)) {
    throw new JwtGrpcError(
      'ERR_SELF_CHECK_FAILED',
      `self-check of a token signed with kid ${signed.kid} failed: its signature does not verify`,
    );
  }
  return signed;
}
