import { Buffer } from 'node:buffer';
import type { Registry } from 'prom-client';
import { ALGORITHM_SPECS } from '../algorithms/index.js';
import { isAlgorithm } from '../algorithms/names.js';
import { invalidOption } from '../base/errors.js';
import type { KeyInfo } from '../keys/key-set.js';
import { MAX_KID_LENGTH } from '../keys/key-set.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { type FetchFailureCount, fetchFailureCount, rejectedKeyCounts } from '../metrics/remote-jwks-metrics.js';
import { metricsRegistry } from '../options/kinds.js';
import {
  type AnyAudience,
  type CheckedExpectations,
  type ClaimExpectations,
  audienceOption,
  checkedAudience,
  expectationsFor,
} from '../tokens/claims.js';
import { type VerifyFailure, type VerifyResult, failure } from '../tokens/result.js';
import { type KeyVerifier, createKeyVerifier } from '../tokens/verify.js';
import { GrpcStatusError, GrpcStatus } from '../contracts/handler-api.js';
import { REMOTE_VERIFIER_DEFAULTS } from '../client/defaults.js';
import type { JwtClient } from '../client/jwt-client.js';
import { integerOption, stringOption } from '../client/options.js';
import { type HttpJwksLocation, httpJwksSource, isHttpJwksLocation } from './remote-jwks-http.js';
import { parseJwks } from './remote-jwks.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { optionValue } from '../options/resolve.js';
import { singleFlight } from '../client/single-flight.js';
import { type StatusListCheck, createStatusListCheck, originOf } from './status-list-check.js';
import { statusName } from '../client/status.js';

/**
 * What {@link createRemoteVerifier} needs of a {@link JwtClient}: any object with these two members does.
 *
 * @example
 * ```ts
 * // hidden: import type { ChannelCredentials } from '@grpc/grpc-js';
 * // hidden: declare const tls: ChannelCredentials;
 * const issuer: JwksIssuer = createJwtClient('jwt.internal:50051', { credentials: tls });
 * ```
 */
export type JwksIssuer = Pick<JwtClient, 'target' | 'getJwks'>;

/**
 * Options of {@link createRemoteVerifier}; validated once, when the verifier is made.
 *
 * @example
 * ```ts
 * const options: RemoteVerifierOptions = { audience: 'payments', issuer: 'https://auth.example', cooldownMs: 10_000 };
 * ```
 */
export interface RemoteVerifierOptions {
  /**
   * Required: the `aud` every token must carry unless a `verify` call names another, or
   * {@link ANY_AUDIENCE} to accept tokens for any audience. Left out, `createRemoteVerifier`
   * throws (ERR_INVALID_OPTION): a token the issuer minted for another service would pass.
   */
  readonly audience: string | AnyAudience;
  /**
   * Required `iss`, unless a `verify` call names its own. Default: with `{ issuerUrl }`, the
   * issuer discovery found (the URL given, which the document must name exactly); otherwise
   * not checked (a JwtClient or a JWKS URL does not say which issuer it is).
   */
  readonly issuer?: string;
  /** Leeway for exp, nbf and iat, in seconds (0 to 300). Default 5, as every verifier of jwt-grpc (docs/library.md). */
  readonly clockToleranceSeconds?: number;
  /** Least time between two fetches caused by unknown kids or age, in ms. Default 30000. */
  readonly cooldownMs?: number;
  /** A set older than this is refetched (in the background; calls go on with it), in ms. Default 600000. */
  readonly maxAgeMs?: number;
  /**
   * While the issuer cannot be reached, the last good JWK Set and status list keep answering
   * until they are this old (since their last successful fetch), in ms; after that, calls
   * that need them are refused (UNAVAILABLE) until a fetch succeeds. A status list never
   * answers past its own `exp`. Default 86400000 (a day, docs/library.md).
   */
  readonly maxStaleMs?: number;
  /** Where set changes (info) and unreachable issuers (warn) are reported. Default: stderr, warnings and errors. */
  readonly logger?: Logger;
  /**
   * Origins (`https://host[:port]`) besides the issuer's from which a Token Status List may
   * be fetched when a token's `status.status_list.uri` names one (docs/status-list.md).
   * The issuer's own origin (of `issuerUrl`, `jwksUrl` or the `issuer` option) is always
   * allowed; any other uri is refused (`ISSUER_MISMATCH`), never fetched. Default: none.
   */
  readonly statusListOrigins?: readonly string[];
  /**
   * A prom-client Registry (yours, served by you) in which to count the keys of fetched
   * sets that were left out: `jwt_grpc_remote_jwks_rejected_keys_total{reason}`
   * (docs/metrics-and-logs.md). Verifiers may share one. Default: none, nothing counted.
   */
  readonly metricsRegistry?: Registry;
}

/** The names {@link RemoteVerifierOptions} holds; an object with another is refused. */
const REMOTE_VERIFIER_OPTION_NAMES = optionNames<RemoteVerifierOptions>({
  audience: true,
  issuer: true,
  clockToleranceSeconds: true,
  cooldownMs: true,
  maxAgeMs: true,
  maxStaleMs: true,
  logger: true,
  statusListOrigins: true,
  metricsRegistry: true,
});

/**
 * Verifies tokens locally with the keys an issuer publishes through GetJwks; made by
 * {@link createRemoteVerifier}.
 *
 * @example
 * ```ts
 * // hidden: declare const verifier: RemoteVerifier;
 * // hidden: declare const token: string;
 * const result = await verifier.verify(token, { audience: 'payments' });
 * console.log(verifier.keys.map((key) => key.kid)); // the kids it verifies with now
 * ```
 */
export interface RemoteVerifier {
  /**
   * Verifies `token` like {@link Verifier.verify}. Rejects (GrpcStatusError, UNAVAILABLE,
   * naming the issuer) when no JWK Set has ever been fetched; once one has, an
   * unreachable issuer means the last good set keeps verifying until it is `maxStaleMs`
   * old, and rejects the same way after that. A token with a `status`
   * claim (Token Status List) is also checked against the list it names: `REVOKED` when
   * its entry is set; the promise rejects (UNAVAILABLE) when the list can be neither
   * fetched nor used from the cache (fresh for its `ttl`, usable until its `exp`).
   */
  verify(token: string, expect?: ClaimExpectations): Promise<VerifyResult>;
  /** Fetches the set now, sharing a fetch in flight; rejects like `verify` when it cannot. Call it before serving. */
  refresh(): Promise<void>;
  /** The keys of the set in use; empty before the first fetch, and while the last set is older than `maxStaleMs`. */
  readonly keys: readonly KeyInfo[];
  /** The `audience` it was made with: what a call that names none must carry. */
  readonly audience: string | AnyAudience;
}

/** One fetched JWK Set, ready to verify with. */
interface KeyState {
  readonly verifier: KeyVerifier | undefined;
  readonly kids: ReadonlySet<string>;
  readonly keys: readonly KeyInfo[];
  readonly jwksJson: string;
  readonly fetchedAtMs: number;
}

interface TokenHeader {
  readonly alg?: unknown;
  readonly kid?: unknown;
}

/** The `alg` and `kid` a token's header names, if it is readable; never trusted, only used to decide on a refetch. */
function peekHeader(token: string): TokenHeader | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null ? (header as TokenHeader) : undefined;
  } catch {
    return undefined;
  }
}

function describeError(err: unknown): string {
  if (err instanceof GrpcStatusError) return `${statusName(err.status)}: ${err.details}`;
  return err instanceof Error ? err.message : String(err);
}

/** A miss on an HMAC token: no refetch can help, and the reason should say so. */
function hmacMiss(header: TokenHeader | undefined): VerifyFailure | undefined {
  const alg = header?.alg;
  if (!isAlgorithm(alg) || !ALGORITHM_SPECS[alg].symmetric) return undefined;
  return failure('UNKNOWN_KEY', `${alg} tokens cannot be verified with a JWK Set: the issuer publishes no HMAC keys (use VerifyJwt)`);
}

/** Whether a token's header names a kid worth a refetch: one of a valid length the set lacks. */
function isUnknownKid(kid: unknown, state: KeyState | undefined): kid is string {
  return typeof kid === 'string' && kid.length > 0 && kid.length <= MAX_KID_LENGTH && state?.kids.has(kid) !== true;
}

/** The options of {@link createRemoteVerifier}, validated: what {@link RemoteJwksVerifier} is made with. */
interface RemoteVerifierSettings {
  readonly client: JwksIssuer;
  readonly audience: string | AnyAudience;
  readonly expectDefaults: CheckedExpectations;
  readonly clockToleranceSeconds: number;
  readonly cooldownMs: number;
  readonly maxAgeMs: number;
  readonly maxStaleMs: number;
  readonly logger: Logger;
  readonly rejected: ReturnType<typeof rejectedKeyCounts> | undefined;
  readonly countFailure: FetchFailureCount;
  readonly statusListOrigins: ReadonlySet<string>;
}

/** The counters of `registry` (checked), or none: counting into nothing. */
function remoteMetrics(registry: unknown): Pick<RemoteVerifierSettings, 'rejected' | 'countFailure'> {
  if (registry === undefined) return { rejected: undefined, countFailure: () => {} };
  const checked = metricsRegistry.check(registry, 'metricsRegistry');
  return { rejected: rejectedKeyCounts(checked), countFailure: fetchFailureCount(checked) };
}

/** Validates the source and options once, naming the bad one. */
function remoteVerifierSettings(source: JwksIssuer | HttpJwksLocation, given: RemoteVerifierOptions): RemoteVerifierSettings {
  refuseUnknownOptions(given, REMOTE_VERIFIER_OPTION_NAMES, { owner: 'createRemoteVerifier' });
  checkHttpLocation(source);
  const http = isHttpJwksLocation(source) ? httpJwksSource(source) : undefined;
  const client: JwksIssuer = http ?? (source as JwksIssuer);
  if (typeof client?.getJwks !== 'function')
    throw invalidOption('client', 'must be a JwtClient (createJwtClient), { issuerUrl } or { jwksUrl }');
  // From JavaScript, no options at all: the error names the one it must have.
  const options = given ?? ({} as RemoteVerifierOptions);
  const audience = audienceOption(options.audience, true) as string | AnyAudience;
  // Found by discovery: tokens must carry the issuer whose keys verify them.
  const issuer = stringOption('issuer', options.issuer) ?? http?.issuer;
  return {
    client,
    audience,
    expectDefaults: { audience: checkedAudience(audience), issuer },
    clockToleranceSeconds: optionValue('clockToleranceSeconds', options.clockToleranceSeconds),
    cooldownMs: integerOption('cooldownMs', options.cooldownMs, REMOTE_VERIFIER_DEFAULTS.cooldownMs, 0, 86_400_000),
    maxAgeMs: integerOption('maxAgeMs', options.maxAgeMs, REMOTE_VERIFIER_DEFAULTS.maxAgeMs, 1, 7 * 86_400_000),
    maxStaleMs: integerOption('maxStaleMs', options.maxStaleMs, REMOTE_VERIFIER_DEFAULTS.maxStaleMs, 1, 30 * 86_400_000),
    logger: options.logger ?? createStderrLogger(),
    ...remoteMetrics(options.metricsRegistry),
    statusListOrigins: statusListOrigins(source, issuer, options.statusListOrigins),
  };
}

/**
 * A remote verifier: the issuer's JWK Set, fetched and cached, and the one path a token
 * takes through it ({@link RemoteJwksVerifier.verifyByKeys}). What it holds (the set, when
 * it was fetched, the last failure) is private and replaced whole by a fetch, so a token is
 * always checked against one set as fetched; calls that need a fetch while one runs share
 * it. @internal
 */
class RemoteJwksVerifier {
  readonly audience: string | AnyAudience;
  readonly #client: JwksIssuer;
  /** Names the issuer in logs and errors: the client's target, e.g. `jwt.internal:50051`. */
  readonly #issuerTarget: string;
  readonly #settings: RemoteVerifierSettings;
  readonly #logger: Logger;
  readonly #statusLists: StatusListCheck;
  /** The one fetch of the set: calls that need one while it runs share it. */
  readonly #fetch = singleFlight(() => this.#fetchKeys());
  #state: KeyState | undefined;
  #lastFetchMs = -Infinity;
  #lastFailure: GrpcStatusError | undefined;

  constructor(settings: RemoteVerifierSettings) {
    this.#settings = settings;
    this.#client = settings.client;
    this.#issuerTarget = settings.client.target;
    this.#logger = settings.logger;
    this.audience = settings.audience;
    const verifyWithJwks = (token: string): Promise<VerifyResult> => this.#verifyListToken(token);
    this.#statusLists = createStatusListCheck({
      allowedOrigins: settings.statusListOrigins,
      verifyWithJwks,
      logger: settings.logger,
      maxStaleMs: settings.maxStaleMs,
      countFailure: (answer) => settings.countFailure('status_list', answer),
    });
  }

  get keys(): readonly KeyInfo[] {
    return this.#usable(Date.now())?.keys ?? [];
  }

  /** The set to verify with: the last good one until it is maxStaleMs old, then none until a fetch succeeds. */
  #usable(now: number): KeyState | undefined {
    const state = this.#state;
    return state !== undefined && now - state.fetchedAtMs < this.#settings.maxStaleMs ? state : undefined;
  }

  verify(token: string, expect?: ClaimExpectations): Promise<VerifyResult> {
    let expectations: ClaimExpectations;
    try {
      expectations = expectationsFor(expect, this.#settings.expectDefaults);
    } catch (err) {
      // A promise-returning call refuses by rejecting, never by throwing.
      return Promise.reject(err);
    }
    const result = this.verifyByKeys(token, expectations, true);
    if (result instanceof Promise) return result.then((verified) => this.#withStatus(verified));
    // The common case, a valid token without a status claim, costs what it did before.
    return result.valid && result.payload['status'] !== undefined ? this.#withStatus(result) : Promise.resolve(result);
  }

  async refresh(): Promise<void> {
    await this.#fetch.run();
  }

  /**
   * The one path of a token through the keys, for a call's token (`cache`) and a Status
   * List Token (uncached: large and replaced each ttl, it would only crowd the cache):
   * verify with the set in use; on an unknown kid, refetch once (or join a fetch in flight) and decide.
   */
  verifyByKeys(token: string, expect: ClaimExpectations, cache: boolean): VerifyResult | Promise<VerifyResult> {
    const now = Date.now();
    const current = this.#usable(now);
    if (current === undefined) return this.#verifyWithoutKeys(token, expect, cache);
    this.#refreshIfOld(current, now);
    const result = this.#check(current, token, expect, cache);
    if (result.valid || result.reason !== 'UNKNOWN_KEY') return result;
    return this.#retryUnknownKey(token, expect, result, cache);
  }

  #check(current: KeyState, token: string, expect: ClaimExpectations, cache: boolean): VerifyResult {
    if (current.verifier === undefined) return failure('UNKNOWN_KEY', `issuer ${this.#issuerTarget} publishes no key that can verify`);
    return cache ? current.verifier.verify(token, expect) : current.verifier.verifyUncached(token, expect);
  }

  /** A set older than maxAgeMs is refetched in the background; calls go on with it. */
  #refreshIfOld(current: KeyState, now: number): void {
    if (now - current.fetchedAtMs >= this.#settings.maxAgeMs && !this.#fetch.running && this.#mayFetch(now))
      this.#fetch.run().catch(() => {});
  }

  /** True when a fetch may start now: rate-limited so that unknown kids or a down issuer cannot drive a fetch per call. */
  #mayFetch(now: number): boolean {
    const { cooldownMs } = this.#settings;
    const wait = this.#usable(now) === undefined ? Math.min(cooldownMs, REMOTE_VERIFIER_DEFAULTS.retryWithoutKeysMs) : cooldownMs;
    return now - this.#lastFetchMs >= wait;
  }

  /** No set yet, or only one past maxStaleMs: fetch one (at most once a retry interval; between, the last failure answers). */
  async #verifyWithoutKeys(token: string, expect: ClaimExpectations, cache: boolean): Promise<VerifyResult> {
    if (!this.#fetch.running && !this.#mayFetch(Date.now()) && this.#lastFailure !== undefined) throw this.#lastFailure;
    const result = this.#check(await this.#fetch.run(), token, expect, cache);
    if (result.valid || result.reason !== 'UNKNOWN_KEY') return result;
    return hmacMiss(peekHeader(token)) ?? result;
  }

  /** A token names a kid the set lacks: refetch once (or join a fetch in flight), then decide. */
  async #retryUnknownKey(token: string, expect: ClaimExpectations, miss: VerifyFailure, cache: boolean): Promise<VerifyResult> {
    const header = peekHeader(token);
    const hmac = hmacMiss(header);
    if (hmac !== undefined) return hmac;
    if (!isUnknownKid(header?.kid, this.#state)) return miss;
    if (!this.#fetch.running && !this.#mayFetch(Date.now())) return miss;
    try {
      return this.#check(await this.#fetch.run(), token, expect, cache);
    } catch {
      return miss;
    }
  }

  /** A Status List Token's signature and claims by the JWK Set: the status check's own verification. */
  async #verifyListToken(token: string): Promise<VerifyResult> {
    return this.verifyByKeys(token, {}, false);
  }

  /** Section 8.3 of draft-ietf-oauth-status-list-20: the status is looked at only once the token itself is valid. */
  async #withStatus(result: VerifyResult): Promise<VerifyResult> {
    if (!result.valid || result.payload['status'] === undefined) return result;
    const outcome = await this.#statusLists.check(result.payload['status']);
    return outcome.ok ? result : failure(outcome.reason, outcome.message);
  }

  async #fetchKeys(): Promise<KeyState> {
    this.#lastFetchMs = Date.now();
    try {
      const response = await this.#client.getJwks();
      this.#state = this.#load(response.jwks_json, Date.now());
      this.#lastFailure = undefined;
      return this.#state;
    } catch (err) {
      this.#lastFailure = this.#fetchFailed(err);
      throw this.#lastFailure;
    }
  }

  /** A failed fetch, logged and counted as what it means now: the last good set in use, or calls refused (none, or too old). */
  #fetchFailed(err: unknown): GrpcStatusError {
    const why = describeError(err);
    const issuer = this.#issuerTarget;
    const now = Date.now();
    const state = this.#state;
    const ageSeconds = state === undefined ? undefined : Math.round((now - state.fetchedAtMs) / 1000);
    if (this.#usable(now) !== undefined) {
      this.#logger.warn('cannot fetch the JWK Set: verifying with the last good set', { issuer, error: why, ageSeconds });
      this.#settings.countFailure('jwks', 'last_good');
      return new GrpcStatusError(GrpcStatus.UNAVAILABLE, `no JWK Set from issuer ${issuer}: ${why}`, { cause: err });
    }
    this.#settings.countFailure('jwks', 'refused');
    if (state === undefined) {
      this.#logger.warn('cannot fetch the JWK Set: no keys yet, calls are refused', { issuer, error: why });
      return new GrpcStatusError(GrpcStatus.UNAVAILABLE, `no JWK Set from issuer ${issuer}: ${why}`, { cause: err });
    }
    const { maxStaleMs } = this.#settings;
    this.#logger.warn('cannot fetch the JWK Set: the last good set is older than maxStaleMs, calls are refused', {
      issuer,
      error: why,
      ageSeconds,
      maxStaleMs,
    });
    const details = `no JWK Set from issuer ${issuer}: ${why}; the last good set is ${ageSeconds} s old, past maxStaleMs (${maxStaleMs} ms)`;
    return new GrpcStatusError(GrpcStatus.UNAVAILABLE, details, { cause: err });
  }

  /** A fetched set as the state to verify with; an unchanged set (or a 304) keeps its verifier and logs nothing. */
  #load(jwksJson: string, now: number): KeyState {
    const state = this.#state;
    if (state !== undefined && state.jwksJson === jwksJson) return { ...state, fetchedAtMs: now };
    const parsed = parseJwks(jwksJson, this.#issuerTarget);
    this.#reportRefused(parsed.refused);
    if (parsed.keySet === undefined)
      this.#logger.warn('JWK Set has no key that can verify: every token is UNKNOWN_KEY', { issuer: this.#issuerTarget });
    else this.#logger.info('JWK Set loaded', { issuer: this.#issuerTarget, kids: parsed.keys.map((key) => key.kid) });
    const { clockToleranceSeconds } = this.#settings;
    return {
      verifier: parsed.keySet === undefined ? undefined : createKeyVerifier(parsed.keySet, { clockToleranceSeconds }),
      kids: new Set(parsed.keys.map((key) => key.kid)),
      keys: parsed.keys,
      jwksJson,
      fetchedAtMs: now,
    };
  }

  /** Once per key of a changed set: logged, and counted when a registry was given. */
  #reportRefused(refused: ReturnType<typeof parseJwks>['refused']): void {
    for (const { kid, reason, problem } of refused) {
      this.#logger.warn('JWK Set key left out', { issuer: this.#issuerTarget, kid, reason, problem });
      const cell = this.#settings.rejected?.get(reason);
      if (cell !== undefined) cell.count += 1;
    }
  }
}

/**
 * Creates a verifier that fetches the issuer's JWK Set through `client.getJwks()` and
 * verifies locally with the package's own verifier: no call to the issuer per token. The
 * set is refetched when a token names a kid it lacks (at most once per `cooldownMs`,
 * concurrent misses sharing one fetch) and when it is older than `maxAgeMs`. When the
 * issuer is down, the last good set keeps verifying for `maxStaleMs` and the logger says so.
 *
 * Keys come only from the issuer: a token's `jku`, `x5u`, `jwk` and `x5c` are refused, as
 * everywhere in jwt-grpc. GetJwks publishes public keys only, never HMAC secrets, so an
 * HS256 token is `UNKNOWN_KEY` here: verify those with VerifyJwt on the issuer.
 *
 * Instead of a client, `{ issuerUrl }` finds the set over HTTP(S) by OpenID discovery
 * (the document must name that issuer exactly; tokens must then carry it as `iss` unless
 * `options.issuer` says otherwise), and `{ jwksUrl }` reads it from that URL: the same
 * cache rules, each refetch a conditional request (`If-None-Match`, 304 when unchanged).
 *
 * @example
 * ```ts
 * // hidden: import { credentials } from '@grpc/grpc-js';
 * // hidden: declare const caPem: Buffer;
 * // hidden: declare const token: string;
 * const issuer = createJwtClient('jwt.internal:50051', { credentials: credentials.createSsl(caPem) });
 * const verifier = createRemoteVerifier(issuer, { audience: 'payments', issuer: 'https://auth.example' });
 * await verifier.refresh(); // fail fast at start if the issuer is unreachable
 * const result = await verifier.verify(token);
 * if (!result.valid) console.log(result.reason); // e.g. 'EXPIRED'
 *
 * // Or over HTTP, from any OpenID issuer (jwt-grpc's --http-port included):
 * const overHttp = createRemoteVerifier({ issuerUrl: 'https://auth.example' }, { audience: 'payments' });
 * ```
 */
export function createRemoteVerifier(source: JwksIssuer | HttpJwksLocation, options: RemoteVerifierOptions): RemoteVerifier {
  const verifier = new RemoteJwksVerifier(remoteVerifierSettings(source, options));
  // A plain object, as jose wraps its RemoteJWKSetImpl: `verify` works unbound, and no private member shows.
  return {
    verify: (token, expect) => verifier.verify(token, expect),
    refresh: () => verifier.refresh(),
    get keys() {
      return verifier.keys;
    },
    audience: verifier.audience,
  };
}

/**
 * A source that is no JwtClient is an HTTP location: `{ issuerUrl }` or `{ jwksUrl }`,
 * exactly one, nothing else (a misspelt `issuerURL` would otherwise read as "not a client").
 */
function checkHttpLocation(source: unknown): void {
  if (typeof source !== 'object' || source === null || typeof (source as { getJwks?: unknown }).getJwks === 'function') return;
  // Read with `in`, as isHttpJwksLocation reads it: an inherited name is given too.
  const known = 'jwksUrl' in source ? ['jwksUrl'] : ['issuerUrl'];
  if ('issuerUrl' in source && 'jwksUrl' in source) throw invalidOption('source', 'give issuerUrl or jwksUrl, not both');
  refuseUnknownOptions(source, known, { path: 'source', owner: 'createRemoteVerifier' });
}

/**
 * The origins a status list may come from: the issuer's (its discovery or JWKS URL, or the
 * `iss` expected, when that is a URL) and those `extra` names. A token picks the uri, so
 * nothing else is ever fetched.
 */
function statusListOrigins(source: JwksIssuer | HttpJwksLocation, issuer: string | undefined, extra: unknown): ReadonlySet<string> {
  const origins = new Set<string>();
  if (isHttpJwksLocation(source)) origins.add(originOf('issuerUrl' in source ? source.issuerUrl : source.jwksUrl, 'issuerUrl'));
  if (issuer !== undefined && /^https?:\/\//i.test(issuer)) origins.add(originOf(issuer, 'issuer'));
  if (extra !== undefined) {
    if (!Array.isArray(extra)) throw invalidOption('statusListOrigins', 'must be an array of http(s) URLs');
    for (const origin of extra) origins.add(originOf(origin, 'statusListOrigins'));
  }
  return origins;
}
