/**
 * The issuer's side of the Token Status List (draft-ietf-oauth-status-list-20,
 * https://datatracker.ietf.org/doc/html/draft-ietf-oauth-status-list-20): the `status`
 * claim of each new token (section 6.2), revocation into the list, and the signed Status
 * List Tokens (section 5.1) that the HTTP port and GetStatusList serve.
 *
 * Positions come from one counter shared by every process (allocator.ts) that never
 * repeats: position p is entry `p mod size` of list `floor(p / size) + 1`, at
 * `PREFIX/statuslists/N`. So a full list rolls over to the next, and a `uri` and `idx`
 * name one token only, ever (section 13.3 recommends against double allocation: the pair
 * would link the tokens that share it). A list is served until every token in it has
 * expired, then retired (section 13.1).
 */
import { STATUS_LIST_RESIGN_FRACTION } from '../../discovery/defaults.js';
import { performance } from 'node:perf_hooks';
import { JwtGrpcError } from '../../base/errors.js';
import type { KeySet } from '../../keys/key-set.js';
import type { Logger } from '../../base/log.js';
import { DEFAULT_INDEX_BLOCK } from '../../options/table.js';
import { IndexAllocator, MAX_BLOCK_AGE_MS, type ReserveIndexes, localReserve } from './allocator.js';
import { StatusList } from './list.js';
import { signStatusListToken, statusListAlgorithm } from './token.js';

/** Where a server's lists live under its issuer: list N's `uri` is `ISSUER/statuslists/N`. */
export const STATUS_LISTS_PATH = '/statuslists/';
/** Entries of a list: 2^20 (128 KiB uncompressed, the size of the draft's test vectors in Appendix C). */
export const DEFAULT_STATUS_LIST_SIZE = 1 << 20;
/**
 * The most lists a process holds at once (8 MiB at the default size). A list retires once
 * its tokens have expired; more lists than this at once would take 2^26 tokens within one
 * token lifetime, which the callers' issuance rates (docs/policy.md) keep far off. Past it,
 * GenerateJwt answers UNAVAILABLE until the oldest retires: memory stays bounded.
 */
export const MAX_LIVE_STATUS_LISTS = 64;
/**
 * The Status List Token's `exp`, in ttls after its `iat`: how long a verifier that cannot
 * reach the issuer may keep using the last list it has before it refuses every token that
 * points to the list (the bounded stale grace of docs/status-list.md).
 */
export const STATUS_LIST_EXP_TTLS = 2;

/**
 * The `status` claim a token carries (section 6.2): where its status lives.
 *
 * @example
 * ```ts
 * const claim: StatusClaim = { status_list: { idx: 7, uri: 'https://auth.example/statuslists/1' } };
 * ```
 */
export interface StatusClaim {
  readonly status_list: { readonly idx: number; readonly uri: string };
}

/**
 * Options of {@link createStatusListIssuer}.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const options: StatusListIssuerOptions = { uriPrefix: 'https://auth.example/statuslists/', keys: () => keys, ttlSeconds: 60, maxTtlSeconds: 3600 };
 * ```
 */
export interface StatusListIssuerOptions {
  /** List N's URI is this followed by N: the `uri` of the `status` claims that point into it and the `sub` of its token. */
  readonly uriPrefix: string;
  /** The keys in use, read at each signing so that rotation is followed. */
  readonly keys: () => KeySet;
  /** The list token's `ttl`: how long verifiers cache it, so the staleness bound of a revocation. */
  readonly ttlSeconds: number;
  /**
   * The longest lifetime of a token (the server's maxTtlSeconds plus its clock tolerance):
   * a list that no process issues into any more retires this long after, plus the age a
   * block may reach ({@link MAX_BLOCK_AGE_MS}).
   */
  readonly maxTtlSeconds: number;
  /** Entries of each list, a multiple of 8. Default {@link DEFAULT_STATUS_LIST_SIZE}. */
  readonly size?: number;
  /** Indexes reserved at a time. Default 4096. */
  readonly blockSize?: number;
  /**
   * Where index blocks come from: a server's RevocationStore.reserveStatusIndexes (the
   * revocations file, Redis INCRBY), directly or through the cluster primary. Default: a
   * counter in this process, which starts from 0 again after a restart.
   */
  readonly reserve?: ReserveIndexes;
  readonly logger?: Logger;
}

/**
 * One server's Token Status Lists: the `statusList` of a server's JwtServiceHandle. A
 * token's position is what RevokeJwt records (`statusIndex`): `(N - 1) * size + idx` for
 * entry `idx` of list N, so `idx` itself in list 1.
 *
 * @example
 * ```ts
 * // hidden: declare const issuer: StatusListIssuer;
 * const claim = await issuer.claimFor(); // into the next token
 * issuer.revoke(issuer.indexOf({ status: claim }) as number);
 * const listToken = issuer.token(claim.status_list.uri); // what verifiers fetch
 * ```
 */
export interface StatusListIssuer {
  /** The uri of the list new tokens go into now. */
  readonly uri: string;
  readonly ttlSeconds: number;
  /**
   * The `status` claim of the next token, with an entry no other token got; a promise of
   * it while the next block of indexes is being reserved (held at most 2 s).
   * @throws JwtGrpcError `ERR_STATUS_LIST_FULL` (GenerateJwt answers UNAVAILABLE) when no index can be had (the primary or
   * store that grants blocks is unreachable, or 64 lists (MAX_LIVE_STATUS_LISTS) are
   * live; the promise rejects with it when the block does not come in time): a token that
   * could not be revoked is never issued.
   */
  claimFor(): StatusClaim | Promise<StatusClaim>;
  /** Marks the entry at `position` revoked (INVALID); false when it already was. @throws JwtGrpcError `ERR_INVALID_ARGUMENT` for a position of no live list. */
  revoke(position: number): boolean;
  /** Whether the entry at `position` is revoked. */
  isRevoked(position: number): boolean;
  /**
   * The position a token's claims carry: from its `status.status_list` when the `uri` is
   * one of this server's lists and the index lies in it; undefined otherwise (a token from
   * before `statusList`, or from another issuer). What RevokeJwt records as `statusIndex`.
   */
  indexOf(claims: Readonly<Record<string, unknown>>): number | undefined;
  /** The uris of the lists held now, oldest first: each until its last token has expired (others are served all VALID). */
  uris(): readonly string[];
  /**
   * The Status List Token of the list `uri` names (default: the list new tokens go into), signed again only when needed.
   * @throws JwtGrpcError `ERR_UNKNOWN_STATUS_LIST` for a uri that is not one of this server's lists.
   */
  token(uri?: string): string;
}

/** A list this process holds, with its last signed token and when it stopped taking new tokens here. */
interface HeldList {
  readonly number: number;
  readonly uri: string;
  readonly list: StatusList;
  signed: { token: string; version: number; keys: KeySet; iat: number } | undefined;
  /** When a later list opened (performance.now): the last of its tokens expires within the retention after. */
  closedAtMs: number | undefined;
}

/**
 * Creates a server's Status List issuer once its first block of indexes is reserved.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const issuer = await createStatusListIssuer({ uriPrefix: 'https://auth.example/statuslists/', keys: () => keys, ttlSeconds: 60, maxTtlSeconds: 3600 });
 * const claims = { sub: 'ada', status: await issuer.claimFor() };
 * ```
 */
export async function createStatusListIssuer(options: StatusListIssuerOptions): Promise<StatusListIssuer> {
  const size = options.size ?? DEFAULT_STATUS_LIST_SIZE;
  new StatusList(size); // checks the size before anything is reserved
  const allocator = new IndexAllocator({
    reserve: options.reserve ?? localReserve(),
    size: Number.MAX_SAFE_INTEGER,
    blockSize: options.blockSize ?? DEFAULT_INDEX_BLOCK,
    logger: options.logger,
  });
  await allocator.start();
  return new RollingStatusLists(options, size, allocator);
}

/** The lists of one server, rolled over at each `size` positions and retired once their tokens have expired. */
class RollingStatusLists implements StatusListIssuer {
  readonly ttlSeconds: number;
  readonly #prefix: string;
  readonly #size: number;
  readonly #keys: () => KeySet;
  readonly #allocator: IndexAllocator;
  readonly #retainMs: number;
  readonly #resignAfter: number;
  readonly #logger: Logger | undefined;
  /** By list number, oldest first (numbers only grow). */
  readonly #held = new Map<number, HeldList>();
  /** The signed tokens of lists served but not held (#unheld), by number, oldest first. */
  readonly #unheldLists = new Map<number, HeldList>();
  #emptyList: StatusList | undefined;
  #newest = 1;

  constructor(options: StatusListIssuerOptions, size: number, allocator: IndexAllocator) {
    this.ttlSeconds = options.ttlSeconds;
    this.#prefix = options.uriPrefix;
    this.#size = size;
    this.#keys = options.keys;
    this.#allocator = allocator;
    this.#retainMs = options.maxTtlSeconds * 1000 + MAX_BLOCK_AGE_MS;
    this.#resignAfter = Math.max(1, Math.floor(options.ttlSeconds / STATUS_LIST_RESIGN_FRACTION));
    this.#logger = options.logger;
    this.#open(1);
  }

  get uri(): string {
    return this.#uriOf(this.#newest);
  }

  claimFor(): StatusClaim | Promise<StatusClaim> {
    const position = this.#allocator.take();
    return typeof position === 'number' ? this.#claim(position) : position.then((held) => this.#claim(held));
  }

  revoke(position: number): boolean {
    return this.#entry(position, true).held.list.set(position % this.#size);
  }

  isRevoked(position: number): boolean {
    const number = this.#numberOf(position);
    return this.#held.get(number)?.list.isSet(position % this.#size) ?? false;
  }

  // A property, not a method: RevokeJwt is handed `indexOf` on its own.
  readonly indexOf = (claims: Readonly<Record<string, unknown>>): number | undefined => {
    const ref = (claims['status'] as { status_list?: { idx?: unknown; uri?: unknown } } | undefined)?.status_list;
    const number = typeof ref?.uri === 'string' ? this.#listNumber(ref.uri) : undefined;
    const idx = ref?.idx;
    if (number === undefined || !Number.isSafeInteger(idx) || (idx as number) < 0 || (idx as number) >= this.#size) return undefined;
    return (number - 1) * this.#size + (idx as number);
  };

  uris(): readonly string[] {
    this.#retire();
    return [...this.#held.values()].map((held) => held.uri);
  }

  token(uri = this.uri): string {
    this.#retire();
    const number = this.#listNumber(uri);
    if (number === undefined || number > this.#newest + MAX_LIVE_STATUS_LISTS)
      throw new JwtGrpcError(
        'ERR_UNKNOWN_STATUS_LIST',
        `no status list ${JSON.stringify(uri.slice(0, 256))}: this server's are ${this.#prefix}N, N from 1 to ${this.#newest + MAX_LIVE_STATUS_LISTS}`,
      );
    return this.#sign(this.#held.get(number) ?? this.#unheld(number));
  }

  /**
   * A list this process holds no entry of: every token in it is VALID as far as this process
   * knows, since every revocation it holds has opened its list. Served so that any process
   * answers for a list another one issues into (a cluster's workers, replicas behind one
   * issuer URL, lists from before a restart), up to MAX_LIVE_STATUS_LISTS past its own
   * newest; one all-VALID list backs them all, and a bounded number of their signed tokens is kept.
   */
  #unheld(number: number): HeldList {
    let unheld = this.#unheldLists.get(number);
    if (unheld === undefined) {
      this.#emptyList ??= new StatusList(this.#size);
      unheld = { number, uri: this.#uriOf(number), list: this.#emptyList, signed: undefined, closedAtMs: undefined };
      if (this.#unheldLists.size >= MAX_LIVE_STATUS_LISTS) this.#unheldLists.delete(this.#unheldLists.keys().next().value as number);
      this.#unheldLists.set(number, unheld);
    }
    return unheld;
  }

  /** N of a uri `PREFIX + N`; undefined for any other uri. */
  #listNumber(uri: string): number | undefined {
    if (!uri.startsWith(this.#prefix)) return undefined;
    const number = uri.slice(this.#prefix.length);
    return /^[1-9][0-9]{0,9}$/.test(number) ? Number(number) : undefined;
  }

  #claim(position: number): StatusClaim {
    const { held, idx } = this.#entry(position, false);
    if (held.number > this.#newest) this.#rollOver(held.number, performance.now());
    return { status_list: { idx, uri: held.uri } };
  }

  /** The list and entry of `position`, opening the list when this process holds it not yet. */
  #entry(position: number, revoking: boolean): { held: HeldList; idx: number } {
    if (!Number.isSafeInteger(position) || position < 0)
      throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `status list position ${position} is not a non-negative integer`);
    const number = this.#numberOf(position);
    const held = this.#held.get(number) ?? this.#open(number, revoking);
    return { held, idx: position % this.#size };
  }

  #numberOf(position: number): number {
    return Math.floor(position / this.#size) + 1;
  }

  #uriOf(number: number): string {
    return `${this.#prefix}${number}`;
  }

  /**
   * Holds list `number`. This process takes positions in increasing order, so a token put
   * into a later list closes the earlier ones here; a list opened for a revocation is closed
   * at once when it is older than the one tokens go into (whoever issued into it stopped
   * before this process's newest block), and left open when it is later (another process
   * issues into it now).
   */
  #open(number: number, revoking = false): HeldList {
    this.#retire();
    if (this.#held.size >= MAX_LIVE_STATUS_LISTS) {
      const oldest = [...this.#held.values()][0] as HeldList;
      throw new JwtGrpcError(
        revoking ? 'ERR_INVALID_ARGUMENT' : 'ERR_STATUS_LIST_FULL',
        `no status list index is free: ${MAX_LIVE_STATUS_LISTS} lists are live, the oldest (${oldest.uri}) until its tokens expire`,
      );
    }
    const nowMs = performance.now();
    const held: HeldList = { number, uri: this.#uriOf(number), list: new StatusList(this.#size), signed: undefined, closedAtMs: undefined };
    this.#unheldLists.delete(number);
    if (number < this.#newest) held.closedAtMs = nowMs;
    this.#held.set(number, held);

    // Map order is insertion order: keep it oldest first.
    for (const [key, value] of [...this.#held].sort(([a], [b]) => a - b)) {
      this.#held.delete(key);
      this.#held.set(key, value);
    }
    return held;
  }

  /** New tokens go into list `number` from now: every earlier list is closed here. */
  #rollOver(number: number, nowMs: number): void {
    for (const earlier of this.#held.values()) if (earlier.number < number) earlier.closedAtMs ??= nowMs;
    this.#newest = number;
    this.#logger?.info('status list rolled over', { uri: this.#uriOf(number) });
  }

  /** Drops the lists whose every token has expired: closed here longer ago than a token lives. */
  #retire(): void {
    const nowMs = performance.now();
    for (const [number, held] of this.#held) {
      if (held.closedAtMs !== undefined && nowMs - held.closedAtMs > this.#retainMs) {
        this.#held.delete(number);
        this.#logger?.info('status list retired: its tokens have expired', { uri: held.uri });
      }
    }
  }

  /** The list's token, signed again after a change, a key change, or a quarter of the ttl. */
  #sign(held: HeldList): string {
    const now = Math.floor(Date.now() / 1000);
    const current = this.#keys();
    const signed = held.signed;
    if (signed !== undefined && signed.version === held.list.version && signed.keys === current && now - signed.iat < this.#resignAfter)
      return signed.token;
    const token = signStatusListToken(current, statusListAlgorithm(current), {
      sub: held.uri,
      iat: now,
      exp: now + STATUS_LIST_EXP_TTLS * this.ttlSeconds,
      ttl: this.ttlSeconds,
      status_list: held.list.json(),
    });
    held.signed = { token, version: held.list.version, keys: current, iat: now };
    return token;
  }
}
