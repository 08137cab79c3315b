/**
 * The issuer's side of the Token Status List (draft-ietf-oauth-status-list-20,
 * https://datatracker.ietf.org/doc/html/draft-ietf-oauth-status-list-20): the `status`
 * claim of each new token (section 6.2), revocation into the list, and the signed Status
 * List Token (section 5.1) that the HTTP port and GetStatusList serve.
 */
import type { KeySet } from '../../keys/key-set.js';
import type { Logger } from '../../log.js';
import { DEFAULT_INDEX_BLOCK } from '../../options/table.js';
import { IndexAllocator, type ReserveIndexes, localReserve } from './allocator.js';
import { StatusList } from './list.js';
import { signStatusListToken, statusListAlgorithm } from './token.js';

/** Where a server's list lives under its issuer: the `uri` is `ISSUER/statuslists/1`. */
export const STATUS_LIST_PATH = '/statuslists/1';
/** Entries of the list: 2^20 (128 KiB uncompressed, the size of the draft's test vectors in Appendix C). */
export const DEFAULT_STATUS_LIST_SIZE = 1 << 20;
/**
 * The Status List Token's `exp`, in ttls after its `iat`: how long a verifier that cannot
 * reach the issuer may keep using the last list it has before it refuses every token that
 * points to the list (the bounded stale grace of docs/status-list.md).
 */
export const STATUS_LIST_EXP_TTLS = 2;
/**
 * The served token is signed again once it is older than this share of the ttl (and at
 * once after a revocation or a key change): a verifier caches it until `iat + ttl`, so a
 * token handed out is always fresh for at least three quarters of its ttl.
 */
export const STATUS_LIST_RESIGN_FRACTION = 4;

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
 * const options: StatusListIssuerOptions = { uri: 'https://auth.example/statuslists/1', keys: () => keys, ttlSeconds: 60 };
 * ```
 */
export interface StatusListIssuerOptions {
  /** The list's URI: the `uri` of every `status` claim and the `sub` of the list token. */
  readonly uri: string;
  /** The keys in use, read at each signing so that rotation is followed. */
  readonly keys: () => KeySet;
  /** The list token's `ttl`: how long verifiers cache it, so the staleness bound of a revocation. */
  readonly ttlSeconds: number;
  /** Entries of the list, a multiple of 8. Default {@link DEFAULT_STATUS_LIST_SIZE}. */
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
 * One server's Token Status List: the `statusList` of a server's JwtServiceHandle.
 *
 * @example
 * ```ts
 * // hidden: declare const issuer: StatusListIssuer;
 * const claim = await issuer.claimFor(); // into the next token
 * issuer.revoke(claim.status_list.idx);
 * const listToken = issuer.token(); // what verifiers fetch
 * ```
 */
export interface StatusListIssuer {
  readonly uri: string;
  readonly ttlSeconds: number;
  /**
   * The `status` claim of the next token, with an index no other token got; a promise of
   * it while the next block of indexes is being reserved (held at most 2 s).
   * @throws JwtGrpcError `ERR_STATUS_LIST_FULL` (GenerateJwt answers UNAVAILABLE) when no index can be had (the list is full, or the
   * primary or store that grants blocks is unreachable; the promise rejects with it when the
   * block does not come in time): a token that could not be revoked is never issued.
   */
  claimFor(): StatusClaim | Promise<StatusClaim>;
  /** Marks `idx` revoked (INVALID); false when it already was. @throws RangeError when `idx` is outside the list. */
  revoke(idx: number): boolean;
  /** Whether `idx` is revoked. */
  isRevoked(idx: number): boolean;
  /**
   * The index a token's claims carry in this list: its `status.status_list.idx` when the
   * `uri` is this list's and the index lies in it; undefined otherwise (a token from
   * before `statusList`, or from another list). What RevokeJwt records as `statusIndex`.
   */
  indexOf(claims: Readonly<Record<string, unknown>>): number | undefined;
  /** The current Status List Token (compact JWS), signed again only when needed. */
  token(): string;
}

/**
 * Creates a server's Status List issuer once its first block of indexes is reserved.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const issuer = await createStatusListIssuer({ uri: 'https://auth.example/statuslists/1', keys: () => keys, ttlSeconds: 60 });
 * const claims = { sub: 'ada', status: await issuer.claimFor() };
 * ```
 */
export async function createStatusListIssuer(options: StatusListIssuerOptions): Promise<StatusListIssuer> {
  const { uri, keys, ttlSeconds, logger } = options;
  const list = new StatusList(options.size ?? DEFAULT_STATUS_LIST_SIZE);
  const allocator = new IndexAllocator({
    reserve: options.reserve ?? localReserve(),
    size: list.size,
    blockSize: options.blockSize ?? DEFAULT_INDEX_BLOCK,
    logger,
  });
  await allocator.start();
  const resignAfter = Math.max(1, Math.floor(ttlSeconds / STATUS_LIST_RESIGN_FRACTION));
  let signed: { token: string; version: number; keys: KeySet; iat: number } | undefined;

  return {
    uri,
    ttlSeconds,
    claimFor() {
      const idx = allocator.take();
      return typeof idx === 'number' ? { status_list: { idx, uri } } : idx.then((held) => ({ status_list: { idx: held, uri } }));
    },
    revoke: (idx) => list.set(idx),
    isRevoked: (idx) => list.isSet(idx),
    indexOf(claims) {
      const ref = (claims['status'] as { status_list?: { idx?: unknown; uri?: unknown } } | undefined)?.status_list;
      if (ref?.uri !== uri || !Number.isSafeInteger(ref.idx)) return undefined;
      const idx = ref.idx as number;
      return idx >= 0 && idx < list.size ? idx : undefined;
    },
    token() {
      const now = Math.floor(Date.now() / 1000);
      const current = keys();
      if (signed !== undefined && signed.version === list.version && signed.keys === current && now - signed.iat < resignAfter)
        return signed.token;
      const token = signStatusListToken(current, statusListAlgorithm(current), {
        sub: uri,
        iat: now,
        exp: now + STATUS_LIST_EXP_TTLS * ttlSeconds,
        ttl: ttlSeconds,
        status_list: list.json(),
      });
      signed = { token, version: list.version, keys: current, iat: now };
      return token;
    },
  };
}
