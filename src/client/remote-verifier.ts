import type { Registry } from 'prom-client';
import { ALGORITHM_SPECS } from '../algorithms/index.js';
import { isAlgorithm } from '../algorithms/names.js';
import { invalidOption } from '../errors.js';
import type { KeyInfo } from '../keys/key-set.js';
import { MAX_KID_LENGTH } from '../keys/key-set.js';
import { type Logger, createStderrLogger } from '../log.js';
import { rejectedKeyCounts } from '../metrics/remote-jwks-metrics.js';
import { metricsRegistry } from '../options/kinds.js';
import { type AnyAudience, type CheckedExpectations, type ClaimExpectations, audienceOption, checkedAudience, expectationsFor } from '../tokens/claims.js';
import { type VerifyFailure, type VerifyResult, failure } from '../tokens/result.js';
import { type KeyVerifier, createKeyVerifier } from '../tokens/verify.js';
import { GrpcStatusError, GrpcStatus } from '../transport/handler-api.js';
import { REMOTE_VERIFIER_DEFAULTS } from './defaults.js';
import type { JwtClient } from './jwt-client.js';
import { integerOption, stringOption } from './options.js';
import { type HttpJwksLocation, httpJwksSource, isHttpJwksLocation } from './remote-jwks-http.js';
import { parseJwks } from './remote-jwks.js';
import { optionNames, refuseUnknownOptions } from '../known-options.js';
import { optionValue } from '../options/resolve.js';
import { singleFlight } from './single-flight.js';
import { createStatusListCheck, originOf } from './status-list-check.js';
import { statusName } from './status.js';

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
   * unreachable issuer means the last good set keeps verifying. A token with a `status`
   * claim (Token Status List) is also checked against the list it names: `REVOKED` when
   * its entry is set; the promise rejects (UNAVAILABLE) when the list can be neither
   * fetched nor used from the cache (fresh for its `ttl`, usable until its `exp`).
   */
  verify(token: string, expect?: ClaimExpectations): Promise<VerifyResult>;
  /** Fetches the set now, sharing a fetch in flight; rejects like `verify` when it cannot. Call it before serving. */
  refresh(): Promise<void>;
  /** The keys of the set in use; empty before the first fetch. */
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

/**
 * Creates a verifier that fetches the issuer's JWK Set through `client.getJwks()` and
 * verifies locally with the package's own verifier: no call to the issuer per token. The
 * set is refetched when a token names a kid it lacks (at most once per `cooldownMs`,
 * concurrent misses sharing one fetch) and when it is older than `maxAgeMs`. When the
 * issuer is down, the last good set keeps verifying and the logger says so.
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
  refuseUnknownOptions(options, REMOTE_VERIFIER_OPTION_NAMES, { owner: 'createRemoteVerifier' });
  checkHttpLocation(source);
  const http = isHttpJwksLocation(source) ? httpJwksSource(source) : undefined;
  const client: JwksIssuer = http ?? (source as JwksIssuer);
  if (typeof client?.getJwks !== 'function') throw invalidOption('client', 'must be a JwtClient (createJwtClient), { issuerUrl } or { jwksUrl }');
  // From JavaScript, no options at all: the error names the one it must have.
  options ??= {} as RemoteVerifierOptions;
  const defaults = REMOTE_VERIFIER_DEFAULTS;
  const audience = audienceOption(options.audience, true) as string | AnyAudience;
  const expectDefaults: CheckedExpectations = {
    audience: checkedAudience(audience),
    // Found by discovery: tokens must carry the issuer whose keys verify them.
    issuer: stringOption('issuer', options.issuer) ?? http?.issuer,
  };
  const clockToleranceSeconds = optionValue('clockToleranceSeconds', options.clockToleranceSeconds);
  const cooldownMs = integerOption('cooldownMs', options.cooldownMs, defaults.cooldownMs, 0, 86_400_000);
  const maxAgeMs = integerOption('maxAgeMs', options.maxAgeMs, defaults.maxAgeMs, 1, 7 * 86_400_000);
  const logger = options.logger ?? createStderrLogger();
  const rejected = options.metricsRegistry === undefined ? undefined : rejectedKeyCounts(metricsRegistry.check(options.metricsRegistry, 'metricsRegistry'));
  /** Names the issuer in logs and errors: the client's target, e.g. `jwt.internal:50051`. */
  const issuerTarget = client.target;
  const statusLists = createStatusListCheck({ allowedOrigins: statusListOrigins(source, expectDefaults.issuer, options.statusListOrigins), verifyWithJwks, logger });

  let state: KeyState | undefined;
  let lastFetchMs = -Infinity;
  let lastFailure: GrpcStatusError | undefined;

  function load(jwksJson: string, now: number): KeyState {
    if (state !== undefined && state.jwksJson === jwksJson) return { ...state, fetchedAtMs: now };
    const parsed = parseJwks(jwksJson, issuerTarget);
    // Once per key of a changed set: an unchanged set (or a 304) returned above logs nothing.
    for (const { kid, reason, problem } of parsed.refused) {
      logger.warn('JWK Set key left out', { issuer: issuerTarget, kid, reason, problem });
      const cell = rejected?.get(reason);
      if (cell !== undefined) cell.count += 1;
    }
    if (parsed.keySet === undefined) logger.warn('JWK Set has no key that can verify: every token is UNKNOWN_KEY', { issuer: issuerTarget });
    else logger.info('JWK Set loaded', { issuer: issuerTarget, kids: parsed.keys.map((key) => key.kid) });
    return {
      verifier: parsed.keySet === undefined ? undefined : createKeyVerifier(parsed.keySet, { clockToleranceSeconds }),
      kids: new Set(parsed.keys.map((key) => key.kid)),
      keys: parsed.keys,
      jwksJson,
      fetchedAtMs: now,
    };
  }

  const fetch = singleFlight(async (): Promise<KeyState> => {
    lastFetchMs = Date.now();
    try {
      const response = await client.getJwks();
      state = load(response.jwks_json, Date.now());
      lastFailure = undefined;
      return state;
    } catch (err) {
      const why = describeError(err);
      if (state === undefined) logger.warn('cannot fetch the JWK Set: no keys yet, calls are refused', { issuer: issuerTarget, error: why });
      else {
        const ageSeconds = Math.round((Date.now() - state.fetchedAtMs) / 1000);
        logger.warn('cannot fetch the JWK Set: verifying with the last good set', { issuer: issuerTarget, error: why, ageSeconds });
      }
      lastFailure = new GrpcStatusError(GrpcStatus.UNAVAILABLE, `no JWK Set from issuer ${issuerTarget}: ${why}`, { cause: err });
      throw lastFailure;
    }
  });

  /** True when a fetch may start now: rate-limited so that unknown kids or a down issuer cannot drive a fetch per call. */
  function mayFetch(now: number): boolean {
    const wait = state === undefined ? Math.min(cooldownMs, defaults.retryWithoutKeysMs) : cooldownMs;
    return now - lastFetchMs >= wait;
  }

  function check(current: KeyState, token: string, expect: ClaimExpectations): VerifyResult {
    if (current.verifier === undefined) return failure('UNKNOWN_KEY', `issuer ${issuerTarget} publishes no key that can verify`);
    return current.verifier.verify(token, expect);
  }

  /** A miss on an HMAC token: no refetch can help, and the reason should say so. */
  function hmacMiss(header: TokenHeader | undefined): VerifyFailure | undefined {
    const alg = header?.alg;
    if (!isAlgorithm(alg) || !ALGORITHM_SPECS[alg].symmetric) return undefined;
    return failure('UNKNOWN_KEY', `${alg} tokens cannot be verified with a JWK Set: the issuer publishes no HMAC keys (use VerifyJwt)`);
  }

  /** A token names a kid the set lacks: refetch once (or join a fetch in flight), then decide. */
  async function retryUnknownKey(token: string, expect: ClaimExpectations, miss: VerifyFailure): Promise<VerifyResult> {
    const header = peekHeader(token);
    const hmac = hmacMiss(header);
    if (hmac !== undefined) return hmac;
    const kid = header?.kid;
    if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH || state?.kids.has(kid) === true) return miss;
    if (!fetch.running && !mayFetch(Date.now())) return miss;
    try {
      return check(await fetch.run(), token, expect);
    } catch {
      return miss;
    }
  }

  async function verifyWithoutKeys(token: string, expect: ClaimExpectations): Promise<VerifyResult> {
    if (!fetch.running && !mayFetch(Date.now()) && lastFailure !== undefined) throw lastFailure;
    const result = check(await fetch.run(), token, expect);
    if (result.valid || result.reason !== 'UNKNOWN_KEY') return result;
    return hmacMiss(peekHeader(token)) ?? result;
  }

  /** Signature and claims of a token by the JWK Set alone, with the unknown-kid refetch: the status list's own check. */
  function verifyByJwks(token: string, expectations: ClaimExpectations): VerifyResult | Promise<VerifyResult> {
    const current = state;
    if (current === undefined) return verifyWithoutKeys(token, expectations);
    const now = Date.now();
    if (now - current.fetchedAtMs >= maxAgeMs && !fetch.running && mayFetch(now)) fetch.run().catch(() => {});
    const result = check(current, token, expectations);
    if (result.valid || result.reason !== 'UNKNOWN_KEY') return result;
    return retryUnknownKey(token, expectations, result);
  }

  /**
   * A Status List Token's signature and claims by the JWK Set: uncached (a list token is
   * large and replaced each ttl, so it would only crowd the cache), with the same
   * unknown-kid refetch as tokens.
   */
  async function verifyWithJwks(token: string): Promise<VerifyResult> {
    const current = state ?? (await fetch.run());
    const result = current.verifier === undefined ? check(current, token, {}) : current.verifier.verifyUncached(token, {});
    if (result.valid || result.reason !== 'UNKNOWN_KEY') return result;
    return retryUnknownKey(token, {}, result);
  }

  /** Section 8.3 of draft-ietf-oauth-status-list-20: the status is looked at only once the token itself is valid. */
  async function withStatus(result: VerifyResult): Promise<VerifyResult> {
    if (!result.valid || result.payload['status'] === undefined) return result;
    const outcome = await statusLists.check(result.payload['status']);
    return outcome.ok ? result : failure(outcome.reason, outcome.message);
  }

  return {
    verify(token, expect) {
      const expectations = expectationsFor(expect, expectDefaults);
      const result = verifyByJwks(token, expectations);
      if (result instanceof Promise) return result.then(withStatus);
      // The common case, a valid token without a status claim, costs what it did before.
      return result.valid && result.payload['status'] !== undefined ? withStatus(result) : Promise.resolve(result);
    },
    async refresh() {
      await fetch.run();
    },
    get keys() {
      return state?.keys ?? [];
    },
    audience,
  };
}

/**
 * A source that is no JwtClient is an HTTP location: `{ issuerUrl }` or `{ jwksUrl }`,
 * exactly one, nothing else (a misspelt `issuerURL` would otherwise read as "not a client").
 */
function checkHttpLocation(source: unknown): void {
  if (typeof source !== 'object' || source === null || typeof (source as { getJwks?: unknown }).getJwks === 'function') return;
  const names = Object.keys(source);
  const known = names.includes('jwksUrl') ? ['jwksUrl'] : ['issuerUrl'];
  if (names.includes('issuerUrl') && names.includes('jwksUrl')) throw invalidOption('source', 'give issuerUrl or jwksUrl, not both');
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
