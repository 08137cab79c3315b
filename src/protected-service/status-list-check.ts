/**
 * The relying party's side of the Token Status List (draft-ietf-oauth-status-list-20,
 * https://datatracker.ietf.org/doc/html/draft-ietf-oauth-status-list-20, section 8.3) for
 * {@link createRemoteVerifier}: fetch the list a token's `status` claim names, over
 * HTTP(S) and only from an allowed origin; verify it with the issuer's JWK Set; cache it
 * as its `iat`, `ttl` and `exp` say; read the token's entry.
 *
 * Freshness (section 13.7): a list is used until `min(fetched, iat) + ttl` (`ttl` bounded to
 * 1 s .. 1 day, section 11.5), never past `exp`; then it is fetched again. When that fetch
 * fails, the last list keeps answering until its `exp` (the issuer's bounded stale grace) or
 * until it is the verifier's `maxStaleMs` old, whichever comes first, and after that every
 * token naming it is refused: the check fails closed.
 */
import { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../base/errors.js';
import { type StatusBits, decodeLst, isStatusBits, statusAt } from '../revocation/status-list/codec.js';
import { STATUS_LIST_MEDIA_TYPE, STATUS_LIST_TYP } from '../revocation/status-list/token.js';
import { fetchDocument } from './fetch-document.js';
import type { Logger } from '../base/log.js';
import type { FailedFetchAnswer } from '../metrics/remote-jwks-metrics.js';
import type { JwtPayload, VerifyResult } from '../tokens/result.js';
import { GrpcStatus, GrpcStatusError } from '../contracts/handler-api.js';

/** The limits of the status list check, in one place. */
export const STATUS_LIST_CHECK_DEFAULTS = {
  /** A fetch of a list must complete within this long. */
  timeoutMs: 5_000,
  /** A larger Status List Token is refused (2^20 entries compress to far less, even half revoked: about 160 KiB). */
  maxTokenBytes: 1 << 20,
  /** A list inflating past this many bytes (2^27 one-bit entries) is refused: a ZLIB bomb costs bounded memory. */
  maxListBytes: 1 << 24,
  /** The `ttl` honoured is clamped to this range (section 11.5: bounds against unreasonable values). */
  minTtlSeconds: 1,
  maxTtlSeconds: 86_400,
  /** A list whose freshness already ran out when fetched (an old `iat`) is still used this long: no fetch per call. */
  minReuseMs: 1_000,
  /** After a failed fetch, the next one waits this long: a down issuer is not asked once per call. */
  retryMs: 1_000,
  /** Lists cached at once; the oldest goes first. */
  maxLists: 64,
} as const;

/** One fetched list. */
interface CachedList {
  readonly bytes: Buffer;
  readonly bits: StatusBits;
  /** Fetch again from then on (ms). */
  readonly freshUntilMs: number;
  /** Never used after this (its `exp`, or `maxStaleMs` after its fetch if sooner; ms). */
  readonly usableUntilMs: number;
}

/** What the check needs of the verifier: the signature and claims check with the issuer's JWK Set. */
export type VerifyWithJwks = (token: string) => Promise<VerifyResult>;

/** The status a token's `status` claim leads to. @internal */
export type StatusOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'REVOKED' | 'MALFORMED' | 'ISSUER_MISMATCH'; readonly message: string };

const OK: StatusOutcome = { ok: true };

function describe(err: unknown): string {
  if (err instanceof GrpcStatusError) return err.details;
  return err instanceof Error ? err.message : String(err);
}

/** The `status_list` reference of a `status` claim (section 6.2), or why it is unusable. */
function reference(status: unknown): { idx: number; uri: URL } | string {
  const list = (status as { status_list?: unknown } | null)?.status_list as { idx?: unknown; uri?: unknown } | undefined;
  if (typeof status !== 'object' || status === null || typeof list !== 'object' || list === null)
    return 'claim status has no status_list object';
  if (!Number.isSafeInteger(list.idx) || (list.idx as number) < 0) return 'claim status.status_list.idx must be a non-negative integer';
  if (typeof list.uri !== 'string') return 'claim status.status_list.uri must be a string';
  try {
    return { idx: list.idx as number, uri: new URL(list.uri) };
  } catch {
    return 'claim status.status_list.uri is not a URI';
  }
}

/** What a {@link StatusListCheck} is made with. @internal */
export interface StatusListCheckOptions {
  /** The only origins a list is fetched from. */
  readonly allowedOrigins: ReadonlySet<string>;
  readonly verifyWithJwks: VerifyWithJwks;
  readonly logger: Logger;
  /** A list is never used longer than this after its fetch, even before its `exp`. */
  readonly maxStaleMs: number;
  /** Called once per failed fetch, with what answers meanwhile. */
  readonly countFailure: (answer: FailedFetchAnswer) => void;
}

/** Where a list is freshened from: its `iat` and `ttl` (clamped), never past when it may be used at all. */
function freshUntil(payload: JwtPayload, fetchedAtMs: number, usableUntilMs: number): number {
  const defaults = STATUS_LIST_CHECK_DEFAULTS;
  const ttl = payload['ttl'];
  const ttlSeconds =
    typeof ttl === 'number' && ttl > 0 ? Math.min(Math.max(ttl, defaults.minTtlSeconds), defaults.maxTtlSeconds) : defaults.maxTtlSeconds;
  const since = typeof payload.iat === 'number' ? Math.min(fetchedAtMs, payload.iat * 1000) : fetchedAtMs;
  return Math.min(Math.max(since + ttlSeconds * 1000, fetchedAtMs + defaults.minReuseMs), usableUntilMs);
}

/** The entry of a token in a list: VALID passes, anything else (or no entry) is refused. */
function outcome(list: CachedList, idx: number, uri: string): StatusOutcome {
  const status = statusAt(list.bytes, list.bits, idx);
  // Section 8.3 step 6: an index outside the list allows no statement: refused.
  if (status === undefined) return { ok: false, reason: 'MALFORMED', message: `status list index ${idx} is outside the list at ${uri}` };
  // Section 7.1: only VALID (0x00) passes; INVALID, SUSPENDED and the rest are refused.
  return status === 0 ? OK : { ok: false, reason: 'REVOKED', message: `status ${status} in the status list at ${uri}` };
}

/**
 * The status check of one remote verifier. `allowedOrigins` are the only origins a list is
 * fetched from (a token chooses the uri, so any other would let it aim the verifier at
 * internal addresses). @internal
 */
export class StatusListCheck {
  readonly #allowedOrigins: ReadonlySet<string>;
  readonly #verifyWithJwks: VerifyWithJwks;
  readonly #logger: Logger;
  readonly #maxStaleMs: number;
  readonly #countFailure: (answer: FailedFetchAnswer) => void;
  /** The lists in use, the oldest first. */
  readonly #lists = new Map<string, CachedList>();
  /** Fetches running, one per uri: the calls that need one share it. */
  readonly #inFlight = new Map<string, Promise<CachedList>>();
  /** When the last fetch of a uri failed: the next waits `retryMs`. */
  readonly #failedAt = new Map<string, number>();

  constructor(options: StatusListCheckOptions) {
    this.#allowedOrigins = options.allowedOrigins;
    this.#verifyWithJwks = options.verifyWithJwks;
    this.#logger = options.logger;
    this.#maxStaleMs = options.maxStaleMs;
    this.#countFailure = options.countFailure;
  }

  /** The status a token's `status` claim leads to: synchronously from a fresh cached list. */
  check(status: unknown): Promise<StatusOutcome> | StatusOutcome {
    const ref = reference(status);
    if (typeof ref === 'string') return { ok: false, reason: 'MALFORMED', message: ref };
    const uri = ref.uri.href;
    if ((ref.uri.protocol !== 'https:' && ref.uri.protocol !== 'http:') || !this.#allowedOrigins.has(ref.uri.origin)) {
      return {
        ok: false,
        reason: 'ISSUER_MISMATCH',
        message: `status list ${uri} is not on an allowed origin (the issuer's, or option statusListOrigins)`,
      };
    }
    const cached = this.#lists.get(uri);
    if (cached !== undefined && Date.now() < cached.freshUntilMs) return outcome(cached, ref.idx, uri);
    return this.#current(uri, cached).then((list) => outcome(list, ref.idx, uri));
  }

  /** The list at `uri` to answer with now: a fetch (shared), else the stale one within `exp`. */
  async #current(uri: string, cached: CachedList | undefined): Promise<CachedList> {
    const shared = this.#inFlight.get(uri);
    if (shared === undefined && Date.now() - (this.#failedAt.get(uri) ?? -Infinity) < STATUS_LIST_CHECK_DEFAULTS.retryMs) {
      if (cached !== undefined && Date.now() < cached.usableUntilMs) return cached;
      throw new GrpcStatusError(
        GrpcStatus.UNAVAILABLE,
        `status list ${uri}: the last fetch failed less than ${STATUS_LIST_CHECK_DEFAULTS.retryMs} ms ago and no usable copy is cached`,
      );
    }
    try {
      const list = await (shared ?? this.#startFetch(uri));
      this.#failedAt.delete(uri);
      this.#remember(uri, list);
      return list;
    } catch (err) {
      this.#failedAt.set(uri, Date.now());
      return this.#fetchFailed(uri, cached, err);
    }
  }

  #startFetch(uri: string): Promise<CachedList> {
    const fetching = this.#fetchList(uri).finally(() => this.#inFlight.delete(uri));
    this.#inFlight.set(uri, fetching);
    return fetching;
  }

  /** A failed fetch: the last list answers until its `exp` or `maxStaleMs`, and after that the check fails closed. */
  #fetchFailed(uri: string, cached: CachedList | undefined, err: unknown): CachedList {
    const why = describe(err);
    if (cached !== undefined && Date.now() < cached.usableUntilMs) {
      this.#countFailure('last_good');
      this.#logger.warn('cannot fetch the status list: answering with the last one until its exp or maxStaleMs', {
        uri,
        error: why,
        expiresAt: new Date(cached.usableUntilMs).toISOString(),
      });
      return cached;
    }
    this.#countFailure('refused');
    this.#logger.warn('cannot fetch the status list: tokens that name it are refused', { uri, error: why });
    const past = cached === undefined ? '' : `; the last one is past its exp or maxStaleMs (${this.#maxStaleMs} ms)`;
    throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, `no usable status list ${uri}: ${why}${past}`, { cause: err });
  }

  async #fetchList(uri: string): Promise<CachedList> {
    const fetchedAtMs = Date.now();
    const { timeoutMs, maxTokenBytes } = STATUS_LIST_CHECK_DEFAULTS;
    // Redirects are refused, not followed (section 8.2 lets clients follow them): a 3xx could lead off the allowed origins.
    const response = await fetchDocument(uri, { timeoutMs, maxBytes: maxTokenBytes }, { accept: STATUS_LIST_MEDIA_TYPE });
    if (response.status !== 200) throw new JwtGrpcError('ERR_FETCH', `GET ${uri}: HTTP ${response.status}`);
    const type = (response.headers.get('content-type') ?? '').split(';', 1)[0]?.trim().toLowerCase();
    if (type !== STATUS_LIST_MEDIA_TYPE)
      throw new JwtGrpcError('ERR_FETCH', `GET ${uri}: content-type ${JSON.stringify(type)}, not ${STATUS_LIST_MEDIA_TYPE} (section 8.2)`);
    return this.#parseListToken(uri, response.body.trim(), fetchedAtMs);
  }

  /** Section 8.3 steps 3 and 4: signature and claims by the JWK Set, typ, sub, then the list itself. */
  async #parseListToken(uri: string, token: string, fetchedAtMs: number): Promise<CachedList> {
    const header = peekTyp(token);
    if (header !== STATUS_LIST_TYP)
      throw new JwtGrpcError('ERR_FETCH', `the token at ${uri} has typ ${JSON.stringify(header)}, not ${STATUS_LIST_TYP} (section 5.1)`);
    const verified = await this.#verifyWithJwks(token);
    if (!verified.valid)
      throw new JwtGrpcError('ERR_FETCH', `the status list at ${uri} does not verify: ${verified.reason}: ${verified.message}`);
    const payload = verified.payload;
    if (payload.sub !== uri)
      throw new JwtGrpcError(
        'ERR_FETCH',
        `the status list at ${uri} has sub ${JSON.stringify(payload.sub)} (section 8.3 step 4a: it must be the uri)`,
      );
    const list = payload['status_list'] as { bits?: unknown; lst?: unknown } | undefined;
    if (typeof list !== 'object' || list === null || !isStatusBits(list.bits) || typeof list.lst !== 'string') {
      throw new JwtGrpcError('ERR_FETCH', `the status list at ${uri} has no valid status_list claim (section 4.2)`);
    }
    const bytes = decodeLst(list.lst, STATUS_LIST_CHECK_DEFAULTS.maxListBytes);
    const usableUntilMs = Math.min(payload.exp * 1000, fetchedAtMs + this.#maxStaleMs);
    return { bytes, bits: list.bits, freshUntilMs: freshUntil(payload, fetchedAtMs, usableUntilMs), usableUntilMs };
  }

  #remember(uri: string, list: CachedList): void {
    this.#lists.delete(uri);
    this.#lists.set(uri, list);
    if (this.#lists.size > STATUS_LIST_CHECK_DEFAULTS.maxLists) this.#lists.delete(this.#lists.keys().next().value as string);
  }
}

/**
 * The status check of one remote verifier, as a {@link StatusListCheck}. @internal
 *
 * @example
 * ```ts
 * // hidden: declare const verifyWithJwks: VerifyWithJwks;
 * const statusLists = createStatusListCheck({
 *   allowedOrigins: new Set(['https://auth.example']),
 *   verifyWithJwks,
 *   logger: createStderrLogger(),
 *   maxStaleMs: 86_400_000,
 *   countFailure: () => {},
 * });
 * ```
 */
export function createStatusListCheck(options: StatusListCheckOptions): StatusListCheck {
  return new StatusListCheck(options);
}

/** The `typ` of a compact JWS's header, if it reads. */
function peekTyp(token: string): unknown {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    return (JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as { typ?: unknown }).typ;
  } catch {
    return undefined;
  }
}

/** An origin of the allow list, from an option. @internal */
export function originOf(value: unknown, name: string): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `option ${name}: must be http(s) URLs, got ${JSON.stringify(value)}`, { field: name });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `option ${name}: must be http(s) URLs, got ${JSON.stringify(value)}`, { field: name });
  }
  return url.origin;
}
