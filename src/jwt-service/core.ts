import type { Span } from '@opentelemetry/api';
import { JwtGrpcError } from '../errors.js';
import type { PolicyDecision, ServiceObserver } from '../metrics/jwt-service-metrics.js';
import { exportKeys } from '../keys/export.js';
import type { KeySet } from '../keys/key-set.js';
import { type SignedToken, type Signer, createSigner } from '../tokens/sign.js';
import { KeyBackendUnavailable } from '../keys/backend.js';
import { type KeyVerifier, createKeyVerifier } from '../tokens/verify.js';
import { failure } from '../tokens/result.js';
import { newJti } from '../tokens/jti.js';
import { type AdminSecret, authorizeRevoke } from '../revocation/admin.js';
import { Revocations } from '../revocation/revocations.js';
import type { Revocation } from '../revocation/types.js';
import type {
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
import { type JwtPolicy, checkPolicy } from '../policy/check.js';
import { type Granted, IssuancePolicy, PolicyDenied } from '../policy/enforce.js';
import { type CallContext, type CallerIdentity, GrpcStatus, GrpcStatusError } from '../transport/handler-api.js';
import { requestClaims } from './request-claims.js';
import type { StatusClaim, StatusListIssuer } from '../revocation/status-list/issuer.js';
import { statusListAlgorithm } from '../revocation/status-list/token.js';
import { revocationOf } from './revoke-request.js';
import { type SubjectPool, createSubjectPool } from './subject-pool.js';

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
}

/**
 * JwtService's logic without the transport: the gRPC handlers only map its results and
 * `ERR_INVALID_REQUEST` errors onto gRPC statuses. @internal
 */
export class JwtServiceCore {
  readonly #options: ResolvedServiceOptions;
  readonly #pool: SubjectPool | undefined;
  /** The issuance policy; undefined in open mode. Replaced whole by setPolicy: a call reads it once. */
  #policy: IssuancePolicy | undefined;
  /** Metrics of the work done; undefined when metrics are off, which then cost one check per call. */
  readonly #observer: ServiceObserver | undefined;
  #state: KeyState;
  /** With `statusList`: the list every new token gets an index in; undefined otherwise. */
  readonly #statusList: StatusListIssuer | undefined;
  readonly #revocations: Revocations;
  readonly #admin: AdminSecret | undefined;
  /** Cache lookups of the verifiers that earlier key sets had. */
  #pastCacheStats = { hits: 0, misses: 0 };

  /** `keys` has passed checkServiceKeys where it was given. */
  constructor(options: ResolvedServiceOptions, keys: KeySet, observer?: ServiceObserver, revocation?: RevocationOptions, statusList?: StatusListIssuer) {
    this.#options = options;
    this.#statusList = statusList;
    this.#revocations = revocation?.revocations ?? new Revocations();
    this.#admin = revocation?.admin;
    this.#pool = options.subjects.length > 0 ? createSubjectPool(options.subjects) : undefined;
    this.#observer = observer;
    this.#policy = options.policy === undefined ? undefined : new IssuancePolicy(options.policy);
    this.#state = this.#prepare(keys);
  }

  get policy(): JwtPolicy | undefined {
    return this.#policy?.policy;
  }

  /** Checks `policy` and puts it in use; a broken one throws and the policy in use stays. */
  setPolicy(policy: JwtPolicy): void {
    const next = new IssuancePolicy(checkPolicy(policy));
    this.#policy = next;
    this.#options.logger.info('issuance policy replaced', { callers: Object.keys(next.policy.callers).length });
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
    if (stale.length > 0) setTimeout(() => void Promise.all(stale.map((handle) => handle.close())), this.#options.keyBackendTimeoutMs).unref();
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
    };
  }

  /**
   * Signs what `request` asks for; with a policy, only what it allows the call's caller
   * (PERMISSION_DENIED otherwise). A caller with a certificate id is named in `client_id`;
   * a bound token carries the certificate's thumbprint in `cnf`. `span` (jwt.sign, when
   * tracing) gets the algorithm and kid, never the token or a claim.
   */
  generate(request: GenerateJwtRequest, call?: Pick<CallContext, 'caller'>, span?: Span): GenerateJwtResponse | Promise<GenerateJwtResponse> {
    const policy = this.#policy;
    const caller = call?.caller;
    const nowSeconds = Math.floor(Date.now() / 1000);
    if (policy !== undefined) return this.#generateUnderPolicy(policy, request, caller, nowSeconds, span);
    const { sub, exp, claims } = requestClaims(request, this.#options, this.#pool, nowSeconds);
    return this.#sign(request.algorithm, sub, exp, caller === undefined && !this.#options.bindTokens ? claims : this.#callerClaims(claims, caller, false), span);
  }

  /**
   * GenerateJwt under a policy: every decision is counted and written as one audit line
   * (the caller, what it asked for, what was signed; never the token), refusals as warnings.
   */
  #generateUnderPolicy(
    policy: IssuancePolicy,
    request: GenerateJwtRequest,
    caller: CallerIdentity | undefined,
    nowSeconds: number,
    span: Span | undefined,
  ): GenerateJwtResponse | Promise<GenerateJwtResponse> {
    let granted: Granted<GenerateJwtRequest> | undefined;
    try {
      granted = policy.authorize(caller, request, this.#options.defaultTtlSeconds);
      const { sub, exp, claims } = requestClaims(granted.request, this.#options, undefined, nowSeconds);
      policy.checkClaims(granted, claims);
      // Under a policy every token has a jti, whatever the jti option: the audit line names it.
      if (claims['jti'] === undefined) claims['jti'] = newJti();
      const response = this.#sign(request.algorithm, sub, exp, this.#callerClaims(claims, caller, granted.entry.bind === true), span);
      const allowed = granted;
      const audit = (signed: GenerateJwtResponse): GenerateJwtResponse => {
        this.#observer?.policyDecision('allow', 'none');
        this.#options.logger.info('policy: token issued', {
          audit: 'issue', decision: 'allow', rule: 'none', caller: allowed.callerId, sub, aud: request.audience, alg: request.algorithm,
          kid: signed.kid, jti: claims['jti'], ttl: exp - nowSeconds, bound: 'cnf' in claims,
          // The status list index, when there is one: what revoking this token sets.
          ...(this.#statusList !== undefined && { statusIdx: (claims['status'] as StatusClaim).status_list.idx }),
        });
        return signed;
      };
      // A key held by an HSM or KMS signs later: the decision is audited when it is known.
      if (response instanceof Promise) return response.then(audit, (err: unknown) => this.#refused(err, request, granted));
      return audit(response);
    } catch (err) {
      return this.#refused(err, request, granted);
    }
  }

  /** Counts and audits a refused GenerateJwt under a policy, then throws `err` on. */
  #refused(err: unknown, request: GenerateJwtRequest, granted: Granted<GenerateJwtRequest> | undefined): never {
    const { decision, rule } = refusalOf(err);
    this.#observer?.policyDecision(decision, rule);
    const max = this.#options.maxSubjectLength;
    this.#options.logger.warn('policy: token refused', {
      audit: 'refuse', decision, rule, caller: err instanceof PolicyDenied ? (err.callerId ?? null) : (granted?.callerId ?? null),
      sub: clip(granted?.request.subject ?? request.subject, max), aud: clip(request.audience, max), alg: clip(request.algorithm, max),
      ttl: granted?.request.ttl_seconds ?? request.ttl_seconds, reason: reasonOf(err),
    });
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

  #sign(algorithm: string, sub: string, exp: number, claims: Record<string, unknown>, span: Span | undefined): GenerateJwtResponse | Promise<GenerateJwtResponse> {
    const state = this.#state;
    // Its own index in the status list (draft-ietf-oauth-status-list-20 section 6.2): an increment.
    if (this.#statusList !== undefined) claims['status'] = this.#statusList.claimFor();
    // One boolean for a key set held in memory: the synchronous path below is today's.
    if (state.hasHandles && state.signer.isAsync(algorithm)) return this.#signThroughBackend(state, algorithm, sub, exp, claims, span);
    return this.#checked(state, state.signer.sign(algorithm, claims), sub, exp, span);
  }

  /**
   * Signs with a key held by an HSM or a KMS: the backend's failure or slowness (past
   * keyBackendTimeoutMs, or an open circuit breaker) is UNAVAILABLE naming the key.
   */
  async #signThroughBackend(state: KeyState, algorithm: string, sub: string, exp: number, claims: Record<string, unknown>, span: Span | undefined): Promise<GenerateJwtResponse> {
    let signed: SignedToken;
    try {
      signed = await state.signer.signAsync(algorithm, claims);
    } catch (err) {
      if (err instanceof KeyBackendUnavailable) {
        this.#options.logger.warn(err.message);
        throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, err.message);
      }
      throw err;
    }
    return this.#checked(state, signed, sub, exp, span);
  }

  #checked(state: KeyState, signed: SignedToken, sub: string, exp: number, span: Span | undefined): GenerateJwtResponse {
    // Verify the token just made before answering, as the Go peer in bench/peers/go/main.go
    // does, so a GenerateJwt costs one sign and one verify on both servers; a key pair that
    // signs what it cannot verify fails the call. Only the signature, over the signing input
    // as issued, with the public key: the header and payload are what the signer just built.
    const { token, kid, alg } = signed;
    if (!state.signer.checkIssued(signed)) throw new Error(`self-check of a token signed with kid ${kid} failed: its signature does not verify`);
    this.#observer?.tokenIssued(alg, kid);
    span?.setAttributes({ 'jwt.alg': alg, 'jwt.kid': kid });
    return { jwt: token, sub, kid, expires_at: exp };
  }

  /**
   * Verifies a token; `span` (jwt.verify, when tracing) gets the algorithm and kid of a
   * valid one (an invalid token's header is the caller's text, not recorded) and the reason.
   */
  verify(request: VerifyJwtRequest, span?: Span): VerifyJwtResponse {
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
    if (result.valid && this.#revocations.size > 0 && this.#revocations.has(result.payload['jti'])) result = failure('REVOKED', 'token was revoked');
    this.#observer?.verified(result);
    if (span !== undefined) {
      span.setAttributes(result.valid ? { 'jwt.alg': result.alg, 'jwt.kid': result.kid, 'jwt.valid': true } : { 'jwt.valid': false, 'jwt.reason': result.reason });
    }
    if (!result.valid) return { valid: false, sub: '', claims_json: '', reason: result.reason };
    return { valid: true, sub: result.payload.sub ?? '', claims_json: result.payloadJson, reason: 'REASON_UNSPECIFIED' };
  }

  jwks(): GetJwksResponse {
    return this.#state.jwks;
  }

  /** The signed status list `request.uri` names (empty: ours); FAILED_PRECONDITION without statusList, NOT_FOUND for another uri. */
  statusListToken(request: GetStatusListRequest): GetStatusListResponse {
    const list = this.#statusList;
    if (list === undefined) throw new GrpcStatusError(GrpcStatus.FAILED_PRECONDITION, 'this server keeps no status list (option statusList, --status-list)');
    if (request.uri !== '' && request.uri !== list.uri) throw new GrpcStatusError(GrpcStatus.NOT_FOUND, `no status list ${JSON.stringify(request.uri.slice(0, 256))}: this server's is ${list.uri}`);
    return { token: list.token() };
  }

  /**
   * RevokeJwt: checks who asks (the admin secret, or a revoker of the policy), reads what
   * to revoke, makes it durable in the store and holds it. Every decision is counted and
   * written as one audit line (who, the jti, until when, the reason; never a token or the secret).
   */
  async revoke(request: RevokeJwtRequest, call: Pick<CallContext, 'caller' | 'metadata'>): Promise<RevokeJwtResponse> {
    const logger = this.#options.logger;
    let by: string;
    try {
      by = authorizeRevoke(call, this.#admin, this.#policy?.policy.revokers);
    } catch (err) {
      const outcome = (err as GrpcStatusError).status === GrpcStatus.UNAUTHENTICATED ? 'unauthenticated' : 'denied';
      this.#observer?.revocation(outcome);
      logger.warn('revocation: refused', { audit: 'revoke', decision: 'deny', caller: call.caller?.id ?? null, reason: (err as Error).message });
      throw err;
    }
    let revocation: Revocation;
    try {
      revocation = revocationOf(request, this.#state.verifier, this.#options, Math.floor(Date.now() / 1000), this.#statusList?.indexOf);
    } catch (err) {
      this.#observer?.revocation('invalid');
      throw err;
    }
    let fresh: boolean;
    try {
      fresh = await this.#revocations.revoke(revocation);
    } catch (err) {
      this.#observer?.revocation('unavailable');
      logger.error('revocation: the store refused it; nothing was revoked', { audit: 'revoke', jti: revocation.jti, error: (err as Error).message });
      throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, `the revocation store is unavailable; nothing was revoked: ${(err as Error).message}`);
    }
    this.#observer?.revocation(fresh ? 'revoked' : 'already');
    const expiresAt = this.#revocations.expiresAt(revocation.jti) ?? revocation.expiresAt;
    logger.info('revocation: token revoked', {
      audit: 'revoke', decision: 'allow', by, jti: revocation.jti, expiresAt, reason: revocation.reason ?? null, already: !fresh,
    });
    return { revoked: true, expires_at: expiresAt };
  }
}

/**
 * Request fields whose refusal is counted under its own rule (`request.<field>`); any other
 * is `request`. A fixed set: the metric's label values stay bounded whatever a caller sends.
 */
const REQUEST_FIELDS = new Set(['subject', 'ttl_seconds', 'audience', 'claims_json', 'algorithm', 'claims']);

/**
 * How a GenerateJwt under a policy that threw is audited and counted: a policy rule broken
 * (`deny`, the rule), a bad request field (`deny`, `request.<field>`), or a failure of the
 * server (`error`: `unavailable` when the status list is full, `internal` otherwise).
 */
function refusalOf(err: unknown): { decision: PolicyDecision; rule: string } {
  if (err instanceof PolicyDenied) return { decision: 'deny', rule: err.rule };
  if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') {
    return { decision: 'deny', rule: err.field !== undefined && REQUEST_FIELDS.has(err.field) ? `request.${err.field}` : 'request' };
  }
  if (err instanceof GrpcStatusError && err.status === GrpcStatus.UNAVAILABLE) return { decision: 'error', rule: 'unavailable' };
  return { decision: 'error', rule: 'internal' };
}

/** What the audit line gives as the reason: what the caller was told; an internal failure's message stays in the transport's own log line. */
function reasonOf(err: unknown): string {
  if (err instanceof GrpcStatusError) return err.details;
  if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') return err.message;
  return 'internal error';
}

/** A caller's text as an audit line quotes it: at most `max` characters (the longest valid subject), so a refused oversized one cannot swell the log. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length} characters)`;
}
